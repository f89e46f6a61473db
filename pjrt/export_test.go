package pjrt

// KVBridgeExchange exposes kvBridgeExchange to the external test package.
var KVBridgeExchange = kvBridgeExchange
