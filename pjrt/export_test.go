package pjrt

// KVBridgeExchange exposes kvBridgeExchange to the external test package.
var KVBridgeExchange = kvBridgeExchange

// KVBridgeConcurrent exposes kvBridgeConcurrent to the external test package.
var KVBridgeConcurrent = kvBridgeConcurrent
