package xlaproto

// The fields of XLA's HLO module protos that pjrt reads from an optimized program, as numbered
// in xla/service/hlo.proto and xla/xla_data.proto.
const (
	// HloModuleProtoWithConfig.hlo_module.
	HloModuleWithConfigModule = 1

	// HloModuleProto.
	HloModuleComputations             = 3  // repeated HloComputationProto
	HloModuleHostProgramShape         = 4  // ProgramShapeProto
	HloModuleSpmdOutputSharding       = 12 // OpSharding
	HloModuleSpmdParametersShardings  = 14 // repeated OpSharding
	HloComputationName                = 1  // HloComputationProto.name
	HloComputationInstructions        = 2  // HloComputationProto.instructions
	ProgramShapeParameters            = 1  // ProgramShapeProto.parameters: repeated ShapeProto
	ShapeElementType                  = 2  // ShapeProto.element_type: PrimitiveType
	ShapeDimensions                   = 3  // ShapeProto.dimensions
	ShapeTupleShapes                  = 4  // ShapeProto.tuple_shapes
	ReplicaGroupReplicaIDs            = 1  // ReplicaGroup.replica_ids
	SourceTargetPairSource            = 1  // SourceTarget.source
	SourceTargetPairTarget            = 2  // SourceTarget.target
	CollectiveDeviceListReplicaGroups = 1  // CollectiveDeviceListProto.replica_groups
	CollectiveDeviceListIota          = 2  // CollectiveDeviceListProto.iota_replica_group_list

	// HloInstructionProto.
	HloInstructionName                 = 1
	HloInstructionOpcode               = 2
	HloInstructionShape                = 3
	HloInstructionDimensions           = 14
	HloInstructionChannelID            = 26
	HloInstructionID                   = 35
	HloInstructionOperandIDs           = 36
	HloInstructionReplicaGroups        = 49 // deprecated, still written
	HloInstructionSourceTargetPairs    = 52
	HloInstructionCollectiveDeviceList = 87
	// HloInstructionIotaReplicaGroups is where newer XLA (the 0.115 CPU plugin) writes the
	// iota form of the replica groups, an IotaReplicaGroupListProto.
	HloInstructionIotaReplicaGroups = 92

	// IotaReplicaGroupListProto.
	IotaGroupsNumGroups       = 1 // num_replica_groups
	IotaGroupsDevicesPerGroup = 2 // num_devices_per_group
	IotaGroupsReshapeDims     = 3 // iota_reshape_dims
	IotaGroupsTransposePerm   = 4 // iota_transpose_perm
)
