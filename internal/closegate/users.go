package closegate

import "sync/atomic"

// Users bits: closed, held exclusively; the bits below count the shared users.
const (
	usersClosed    = 1 << 62
	usersExclusive = 1 << 61
)

// Users is the ownership rule of Gate for small, numerous resources (a pjrt buffer, a jit
// array): one atomic word, no Release function. Shared users Enter and Exit, one exclusive user
// (a call that consumes the resource) EnterExclusive and ExitExclusive, and Close marks the
// resource closed without waiting for any of them. Whoever sees it closed and unused first (Close
// itself, or the last user's Exit) is told so by a true result and frees the resource; nobody
// else is. The zero Users is open and unused.
type Users struct{ state atomic.Int64 }

// Enter admits a shared user; false when the resource is closed or held exclusively (the caller
// must not use it).
// (A compare-and-swap, not an add: a refused Enter must leave no trace, or its undo could see
// the resource closed and unused after it was freed.)
func (u *Users) Enter() bool {
	for {
		v := u.state.Load()
		if v&(usersClosed|usersExclusive) != 0 {
			return false
		}
		if u.state.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// Exit ends a shared use that Enter admitted; true when the caller must free the resource: it
// was the last user of a closed one.
func (u *Users) Exit() bool { return u.state.Add(-1) == usersClosed }

// EnterExclusive admits the one exclusive user of an open resource that nobody else uses; false
// otherwise.
func (u *Users) EnterExclusive() bool { return u.state.CompareAndSwap(0, usersExclusive) }

// ExitExclusive ends the exclusive use; true when the caller must free the resource (it was
// closed meanwhile).
func (u *Users) ExitExclusive() bool {
	for {
		v := u.state.Load()
		if u.state.CompareAndSwap(v, v&^usersExclusive) {
			return v&^usersExclusive == usersClosed
		}
	}
}

// Close marks the resource closed (later Enters fail) and reports whether the caller must free
// it: true when this call closed it and nobody uses it. Only one call ever gets true from Close
// or an Exit.
func (u *Users) Close() bool {
	for {
		v := u.state.Load()
		if v&usersClosed != 0 {
			return false
		}
		if u.state.CompareAndSwap(v, v|usersClosed) {
			return v == 0
		}
	}
}

// IsClosed reports whether Close was called.
func (u *Users) IsClosed() bool { return u.state.Load()&usersClosed != 0 }

// InUse returns the number of shared users, plus one while an exclusive user holds it.
func (u *Users) InUse() int {
	v := u.state.Load()
	n := int(v &^ (usersClosed | usersExclusive))
	if v&usersExclusive != 0 {
		n++
	}
	return n
}
