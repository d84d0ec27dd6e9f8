"""The sweep of torch 2.13's public API (tests/_api_sweep.py walks it, by the rules stated
there and in docs/compat.md): every public name graphgrad lacks must be listed below with the
reason, so a newly missing name fails the test. Entries marked "owner X" belong to another
engineer's area (X fills them in or keeps them listed); the others are checked not to be stale:
once graphgrad has a name, its entry must go."""

import pytest

pytest.importorskip("torch", reason="the sweep compares with torch 2.13 (the test extra)")

from tests._api_sweep import SKIPPED_TREES, missing_names  # noqa: E402

# reason -> the names (without the leading "torch.") graphgrad does not have, on purpose or
# not yet; docs/compat.md gives the same list by reason.
EXPECTED_MISSING = {
    ("owner N: dtypes beyond graphgrad's (float8, sub-byte and wide unsigned ints), the "
     "other devices' autocast state functions, amp internals and torch.special's polynomial "
     "and Bessel families"): """
        BFloat16Tensor Tensor.chalf amp.autocast_mode.autocast_decorator bit bits16 bits1x8
        bits2x4 bits4x2 bits8 chalf complex32 dtype.abbr float4_e2m1fn_x2 float8_e4m3fn
        float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu get_autocast_ipu_dtype
        get_autocast_xla_dtype int1 int2 int3 int4 int5 int6 int7 is_autocast_ipu_enabled
        is_autocast_xla_enabled set_autocast_gpu_dtype
        set_autocast_ipu_dtype set_autocast_ipu_enabled set_autocast_xla_dtype
        set_autocast_xla_enabled special.airy_ai special.bessel_j0 special.bessel_j1
        special.bessel_y0 special.bessel_y1 special.chebyshev_polynomial_t
        special.chebyshev_polynomial_u special.chebyshev_polynomial_v
        special.chebyshev_polynomial_w special.hermite_polynomial_h
        special.hermite_polynomial_he special.laguerre_polynomial_l
        special.legendre_polynomial_p special.modified_bessel_i0 special.modified_bessel_i1
        special.modified_bessel_k0 special.modified_bessel_k1
        special.scaled_modified_bessel_k0 special.scaled_modified_bessel_k1
        special.shifted_chebyshev_polynomial_t special.shifted_chebyshev_polynomial_u
        special.shifted_chebyshev_polynomial_v special.shifted_chebyshev_polynomial_w
        special.spherical_bessel_j0 uint1 uint16 uint2 uint3 uint32 uint4 uint5 uint6 uint64
        uint7""",
    ("owner S: torch.serialization's internals and options"): """
        DeserializationStorageContext PyTorchFileReader PyTorchFileWriter
        SerializationStorageContext""",
    ("owner M: torch.distributed, torch.multiprocessing's internals, typed storages, "
     "DataPipes"): """
        BFloat16Storage BoolStorage ByteStorage CharStorage ComplexDoubleStorage
        ComplexFloatStorage DoubleStorage FloatStorage HalfStorage IntStorage LongStorage
        ShortStorage Storage StorageBase Tensor.storage_type distributed.AllToAllOptions
        distributed.AllreduceCoalescedOptions distributed.AllreduceOptions distributed.Backend
        distributed.BackendConfig distributed.BarrierOptions distributed.BroadcastOptions
        distributed.BuiltinCommHookType distributed.DebugLevel distributed.DeviceMesh
        distributed.DistNetworkError distributed.DistStoreError distributed.FileStore
        distributed.GatherOptions distributed.GradBucket distributed.GroupName
        distributed.HashStore distributed.Logger distributed.P2POp distributed.PrefixStore
        distributed.ProcessGroup distributed.ProcessGroupGloo distributed.QueueEmptyError
        distributed.ReduceOptions distributed.ReduceScatterOptions distributed.Reducer
        distributed.ScatterOptions distributed.Store distributed.TCPStore
        distributed.all_gather_coalesced distributed.all_gather_single
        distributed.all_reduce_coalesced distributed.all_to_all distributed.all_to_all_single
        distributed.batch_isend_irecv distributed.breakpoint distributed.gather
        distributed.gather_object distributed.get_backend_config distributed.get_debug_level
        distributed.get_default_backend_for_device distributed.get_global_rank
        distributed.get_group_rank distributed.get_node_local_rank distributed.get_pg_count
        distributed.get_process_group_ranks distributed.init_device_mesh
        distributed.is_backend_available distributed.is_gloo_available
        distributed.is_nccl_available distributed.is_torchelastic_launched
        distributed.is_ucc_available distributed.is_xccl_available
        distributed.monitored_barrier distributed.new_group distributed.new_subgroups
        distributed.new_subgroups_by_enumeration distributed.record_comm
        distributed.recv_object_list distributed.reduce_op distributed.reduce_scatter_single
        distributed.register_rendezvous_handler distributed.rendezvous distributed.scatter
        distributed.scatter_object_list distributed.send_object_list
        distributed.set_debug_level distributed.set_debug_level_from_env
        distributed.shrink_group distributed.split_group distributed.supports_complex
        multiprocessing.pool.Pool multiprocessing.pool.SimpleQueue
        multiprocessing.pool.clean_worker multiprocessing.queue.ConnectionWrapper
        multiprocessing.queue.Queue multiprocessing.queue.SimpleQueue
        multiprocessing.reductions.SharedCache multiprocessing.reductions.StorageWeakRef
        multiprocessing.reductions.fd_id multiprocessing.reductions.init_reductions
        multiprocessing.reductions.rebuild_cuda_tensor
        multiprocessing.reductions.rebuild_event
        multiprocessing.reductions.rebuild_meta_tensor
        multiprocessing.reductions.rebuild_nested_tensor
        multiprocessing.reductions.rebuild_sparse_compressed_tensor
        multiprocessing.reductions.rebuild_sparse_coo_tensor
        multiprocessing.reductions.rebuild_storage_empty
        multiprocessing.reductions.rebuild_storage_fd
        multiprocessing.reductions.rebuild_storage_filename
        multiprocessing.reductions.rebuild_tensor
        multiprocessing.reductions.rebuild_typed_storage
        multiprocessing.reductions.rebuild_typed_storage_child
        multiprocessing.reductions.reduce_event
        multiprocessing.reductions.reduce_nested_tensor
        multiprocessing.reductions.reduce_sparse_tensor
        multiprocessing.reductions.reduce_storage multiprocessing.reductions.reduce_tensor
        multiprocessing.reductions.reduce_typed_storage
        multiprocessing.reductions.reduce_typed_storage_child
        multiprocessing.reductions.shared_cache multiprocessing.reductions.storage_from_cache
        multiprocessing.spawn.ProcessException multiprocessing.spawn.SpawnContext
        prepare_multiprocessing_environment utils.data.DFIterDataPipe utils.data.DataChunk
        utils.data.DataLoader.check_worker_number_rationality
        utils.data.DataLoader.multiprocessing_context utils.data.IterDataPipe
        utils.data.MapDataPipe utils.data.argument_validation utils.data.functional_datapipe
        utils.data.graph_settings.apply_random_seed utils.data.graph_settings.apply_sharding
        utils.data.graph_settings.apply_shuffle_seed
        utils.data.graph_settings.apply_shuffle_settings
        utils.data.graph_settings.get_all_graph_pipes
        utils.data.guaranteed_datapipes_determinism utils.data.non_deterministic
        utils.data.runtime_validation utils.data.runtime_validation_disabled""",
    ("owner C2: torch.compiler's guard, cache and backend controls"): """
        compiler.allow_in_graph compiler.assume_constant_result
        compiler.cudagraph_mark_step_begin compiler.disable compiler.get_default_backend
        compiler.keep_portable_guards_unsafe compiler.keep_tensor_guards_unsafe
        compiler.load_cache_artifacts compiler.load_compiled_function
        compiler.nested_compile_region compiler.save_cache_artifacts
        compiler.set_default_backend compiler.set_enable_guard_collectives
        compiler.skip_all_guards_unsafe compiler.skip_guard_on_all_nn_modules_unsafe
        compiler.skip_guard_on_globals_unsafe compiler.skip_guard_on_inbuilt_nn_modules_unsafe
        compiler.substitute_in_graph compiler.wrap_numpy""",
    ("quantization: graphgrad has no quantized dtypes or kernels"): """
        QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage
        Tensor.dequantize Tensor.int_repr Tensor.q_per_channel_axis
        Tensor.q_per_channel_scales Tensor.q_per_channel_zero_points Tensor.q_scale
        Tensor.q_zero_point Tensor.qscheme choose_qparams_optimized dequantize empty_quantized
        fake_quantize_per_channel_affine fake_quantize_per_tensor_affine
        fused_moving_avg_obs_fake_quant int_repr per_channel_affine
        per_channel_affine_float_qparams per_channel_symmetric per_tensor_affine
        per_tensor_symmetric q_per_channel_axis q_per_channel_scales q_per_channel_zero_points
        q_scale q_zero_point qint32 qint8 qscheme quantize_per_channel quantize_per_tensor
        quantize_per_tensor_dynamic quantized_batch_norm quantized_gru quantized_gru_cell
        quantized_lstm quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
        quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell quint2x4 quint4x2
        quint8""",
    ("TorchScript: graphgrad does not script or trace (torch.jit.script/trace return their "
     "argument); its IR types, compilation units, async fork/wait and file formats are "
     "absent"): """
        AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType BufferDict CallStack
        ClassType Code CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType
        ConcreteModuleTypeBuilder DeepCopyMemoTable DeviceObjType DictType EnumType
        ErrorReport ExecutionPlan FatalError FileCheck FloatType FutureType Gradient Graph
        GraphExecutorState InferredType IntType InterfaceType JITException ListType
        LiteScriptModule LockingLogger ModuleDict Node NoneType NoopLogger NumberType
        OptionalType ParameterDict PyObjectType RRefType ScriptClass ScriptClassFunction
        ScriptDict ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList
        ScriptListIterator ScriptMethod ScriptModule ScriptModuleSerializer ScriptObject
        ScriptObjectProperty StaticModule StreamObjType StringType SymBoolType SymIntType
        TensorType TracingState TupleType Type UnionType Use Value fork import_ir_module
        import_ir_module_from_buffer jit.CompilationUnit jit.ScriptFunction jit.ScriptModule
        jit.export_opnames merge_type_from_type_comment parse_ir parse_type_comment
        testing.FileCheck unify_type_list wait""",
    ("dispatcher and __torch_function__ internals (dispatch keys, operator schemas and "
     "tags, torch-function guards)"): """
        Capsule DisableTorchFunction DisableTorchFunctionSubclass DispatchKey DispatchKeySet
        ExcludeDispatchKeyGuard FunctionSchema IODescriptor OperatorInfo Tag parse_schema""",
    ("device and vendor-library specific: cuDNN/MIOpen/oneDNN/FBGEMM kernels, "
     "SyncBatchNorm's CUDA statistics kernels, streams and events, CUDA/MPS/MKL backend "
     "switches, NUMA binding, multi-GPU nn.parallel helpers, flash-attention "
     "implementations"): """
        Event Stream Tensor.record_stream Tensor.to_mkldnn backends.cuda.SDPAParams
        backends.cuda.allow_fp16_bf16_reduction_math_sdp backends.cuda.blas_workspace_size
        backends.cuda.can_use_cudnn_attention backends.cuda.can_use_efficient_attention
        backends.cuda.can_use_flash_attention backends.cuda.cuBLASModule
        backends.cuda.cuFFTPlanCache backends.cuda.cuFFTPlanCacheAttrContextProp
        backends.cuda.cuFFTPlanCacheManager backends.cuda.cublas_workspace_size
        backends.cuda.cublaslt_workspace_size backends.cuda.cufft_plan_cache
        backends.cuda.fp16_bf16_reduction_math_sdp_allowed backends.cuda.is_ck_sdpa_available
        backends.cuda.is_flash_attention_available backends.cuda.preferred_blas_library
        backends.cuda.preferred_linalg_library backends.cuda.preferred_rocm_fa_library
        backends.cuda.sdp_kernel backends.mkl.VERBOSE_OFF backends.mkl.VERBOSE_ON
        backends.mkl.verbose backends.mps.get_core_count backends.mps.get_name
        backends.mps.is_macos13_or_newer backends.mps.is_macos_or_newer
        batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt
        batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats
        batch_norm_update_stats
        cpu.get_capabilities cudnn_affine_grid_generator cudnn_batch_norm
        cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu
        cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable
        fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
        fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation
        fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16
        fbgemm_pack_quantized_matrix miopen_batch_norm miopen_convolution
        miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose
        miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d
        mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d
        mkldnn_rnn_layer nn.attention.activate_flash_attention_impl
        nn.attention.current_flash_attention_impl nn.attention.list_flash_attention_impls
        nn.attention.register_flash_attention_impl nn.attention.restore_flash_attention_impl
        nn.parallel.gather nn.parallel.parallel_apply nn.parallel.parallel_apply.get_a_var
        nn.parallel.parallel_apply.parallel_apply nn.parallel.replicate
        nn.parallel.replicate.replicate nn.parallel.scatter nn.parallel.scatter_gather.gather
        nn.parallel.scatter_gather.scatter nn.parallel.scatter_gather.scatter_kwargs
        numa.binding.AffinityMode numa.binding.NumaOptions""",
    ("ATen-level entry points and rarely used in-place/view variants: programs call the "
     "nn/nn.functional forms (nn.LSTM, F.grid_sample, F.layer_norm, ...)"): """
        Tensor.as_strided_ Tensor.as_strided_scatter Tensor.conj_physical_ Tensor.grad_dtype
        Tensor.hash_tensor Tensor.index Tensor.module_load Tensor.reinforce
        Tensor.slice_inverse Tensor.to_padded_tensor affine_grid_generator as_strided_
        as_strided_scatter conj_physical_ conv_tbc embedding_renorm_ from_file grid_sampler
        grid_sampler_2d grid_sampler_3d gru hash_tensor lstm native_batch_norm native_dropout
        native_group_norm native_layer_norm native_norm nn.functional.conv_tbc rnn_relu
        rnn_tanh slice_inverse""",
    ("monitoring counters and the C++ throughput benchmark"): """
        AVG AggregationType BenchmarkConfig BenchmarkExecutionStats SUM ThroughputBenchmark
        utils.ThroughputBenchmark""",
    ("result-type classes of the out= variants and of linalg (graphgrad's functions return "
     "named tuples with torch's fields, kept with each function)"): """
        return_types.all_return_types return_types.aminmax_out return_types.cummax_out
        return_types.cummin_out return_types.frexp_out return_types.geqrf
        return_types.geqrf_out return_types.histogram_out return_types.kthvalue_out
        return_types.linalg_cholesky_ex return_types.linalg_cholesky_ex_out
        return_types.linalg_eig return_types.linalg_eig_out return_types.linalg_eigh
        return_types.linalg_eigh_out return_types.linalg_inv_ex return_types.linalg_inv_ex_out
        return_types.linalg_ldl_factor return_types.linalg_ldl_factor_ex
        return_types.linalg_ldl_factor_ex_out return_types.linalg_ldl_factor_out
        return_types.linalg_lstsq return_types.linalg_lstsq_out return_types.linalg_lu
        return_types.linalg_lu_factor return_types.linalg_lu_factor_ex
        return_types.linalg_lu_factor_ex_out return_types.linalg_lu_factor_out
        return_types.linalg_lu_out return_types.linalg_qr return_types.linalg_qr_out
        return_types.linalg_slogdet return_types.linalg_slogdet_out
        return_types.linalg_solve_ex return_types.linalg_solve_ex_out return_types.linalg_svd
        return_types.linalg_svd_out return_types.lu_unpack return_types.lu_unpack_out
        return_types.max_out return_types.median_out return_types.min_out
        return_types.mode_out return_types.nanmedian_out
        return_types.pytree_register_structseq return_types.qr return_types.qr_out
        return_types.slogdet return_types.slogdet_out return_types.sort_out return_types.svd
        return_types.svd_out return_types.topk_out return_types.triangular_solve
        return_types.triangular_solve_out""",
    ("autograd internals, stream options and deprecated helpers (NestedIOFunction, grad "
     "layout policy, nvtx/itt/kineto profiler hooks, gradcheck's old jacobian getters)"): """
        autograd.NestedIOFunction autograd.enforce_grad_layout_policy
        autograd.function.FunctionMeta autograd.function.InplaceFunction
        autograd.function.NestedIOFunction autograd.grad_mode.enforce_grad_layout_policy
        autograd.grad_mode.set_multithreading_enabled
        autograd.gradcheck.get_analytical_jacobian autograd.gradcheck.get_numerical_jacobian
        autograd.gradcheck.get_numerical_jacobian_wrt_specific_input
        autograd.graph.region_activation_memory_budget
        autograd.graph.set_override_stale_capture_stream
        autograd.graph.set_warn_on_accumulate_grad_stream_mismatch
        autograd.profiler.EnforceUnique autograd.profiler.KinetoStepTracker
        autograd.profiler.MemRecordsAcc autograd.profiler.emit_itt autograd.profiler.emit_nvtx
        autograd.profiler.load_nvprof autograd.profiler.parse_nvprof_trace
        autograd.set_multithreading_enabled autograd.variable.VariableMeta""",
    ("not implemented in graphgrad yet (a plain gap): control flow (cond, while_loop), "
     "lobpcg, segment_reduce, nested (jagged) tensors, DLPack capsules (to_dlpack; "
     "from_dlpack takes __dlpack__ objects), fused linear cross-entropy and grouped/scaled "
     "matmuls, nn.grad's "
     "conv gradients, global module hooks, Adafactor/Muon/SparseAdam and the functional "
     "optimizer kernels, SobolEngine, selective activation "
     "checkpointing, swap_tensors, profiler execution traces"): """
        cond func.debug_unwrap func.rearrange jagged lobpcg nn.LinearCrossEntropyLoss
        nn.LinearCrossEntropyOptions nn.functional.grouped_mm
        nn.functional.linear_cross_entropy nn.functional.scaled_grouped_mm
        nn.functional.scaled_mm nn.grad.conv1d_input nn.grad.conv1d_weight
        nn.grad.conv2d_input nn.grad.conv2d_weight nn.grad.conv3d_input nn.grad.conv3d_weight
        nn.modules.LinearCrossEntropyLoss nn.modules.LinearCrossEntropyOptions
        nn.modules.linear_cross_entropy_options.LinearCrossEntropyOptions
        nn.modules.loss.LinearCrossEntropyLoss nn.modules.module.register_module_backward_hook
        nn.modules.module.register_module_buffer_registration_hook
        nn.modules.module.register_module_full_backward_hook
        nn.modules.module.register_module_full_backward_pre_hook
        nn.modules.module.register_module_module_registration_hook
        nn.modules.module.register_module_parameter_registration_hook optim.Adafactor
        optim.Muon optim.SparseAdam optim.adadelta.adadelta optim.adagrad.adagrad
        optim.adam.adam optim.adamax.adamax optim.adamw.adamw optim.asgd.asgd
        optim.nadam.nadam optim.radam.radam optim.rmsprop.rmsprop optim.rprop.rprop
        optim.sgd.sgd optim.sparse_adam.SparseAdam optim.swap_in_optimizer_params_and_state
        profiler.DeviceType profiler.ExecutionTraceObserver
        profiler.profiler.ExecutionTraceObserver quasirandom.SobolEngine segment_reduce
        to_dlpack utils.checkpoint.CheckpointPolicy utils.checkpoint.DefaultDeviceType
        utils.checkpoint.GraphExecGroup utils.checkpoint.SAC_IGNORED_OPS
        utils.checkpoint.SelectiveCheckpointContext
        utils.checkpoint.create_selective_checkpoint_contexts
        utils.checkpoint.get_device_states utils.checkpoint.set_device_states
        utils.hooks.BackwardHook utils.hooks.unserializable_hook utils.hooks.warn_if_has_hooks
        utils.set_module utils.swap_tensors while_loop""",
    ("helpers for TorchScript and __torch_function__, and docstring fragments "
     "(BroadcastingList, boolean_dispatch, has_torch_function, *_notes, factory_kwargs)"): """
        linalg.common_notes nn.Module.T_destination nn.common_types.T nn.common_types.Tensor
        nn.factory_kwargs nn.functional.BroadcastingList1 nn.functional.BroadcastingList2
        nn.functional.BroadcastingList3 nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
        nn.functional.GRID_SAMPLE_PADDING_MODES nn.functional.ScalingType
        nn.functional.SwizzleType nn.functional.TYPE_CHECKING nn.functional.Tensor
        nn.functional.assert_int_or_pair nn.functional.boolean_dispatch
        nn.functional.handle_torch_function nn.functional.has_torch_function
        nn.functional.has_torch_function_unary nn.functional.has_torch_function_variadic
        nn.functional.reproducibility_notes nn.functional.sparse_support_notes
        nn.functional.tf32_notes optim.Optimizer.OptimizerPostHook
        optim.Optimizer.OptimizerPreHook optim.Optimizer.profile_hook_step""",
    ("graphgrad.onnx has its own exporter API (export from the compiler's IR, audit)"): """
        onnx.ExportableModule onnx.InputObserver onnx.ONNXProgram onnx.OnnxExporterError
        onnx.is_in_onnx_export""",
    ("torch's C++ toolchain, build, mobile and bundling utilities"): """
        LoggerBase PRIVATE_OPS TYPE_CHECKING USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH
        classproperty compiled_with_cxx11_abi get_file_path
        profiler_allow_cudagraph_cupti_lazy_reinit_cuda12 utils.cmake_prefix_path
        utils.generate_methods_for_privateuse1_backend utils.get_cpp_backtrace
        utils.rename_privateuse1_backend""",
}


def _expected():
    out = {}
    for reason, names in EXPECTED_MISSING.items():
        for name in names.split():
            out["torch." + name] = reason
    return out


@pytest.fixture(scope="module")
def missing():
    return missing_names()


def test_no_newly_missing_names(missing):
    new = sorted(missing - set(_expected()))
    assert not new, ("torch 2.13 names graphgrad lacks, not listed in EXPECTED_MISSING (add "
                     "them, or list them with a reason): " + " ".join(new))


def test_expected_missing_is_not_stale(missing):
    stale = sorted(n for n, reason in _expected().items()
                   if n not in missing and not reason.startswith("owner "))
    assert not stale, "graphgrad has these now; drop them from EXPECTED_MISSING: " + " ".join(stale)


def test_every_reason_is_stated():
    for table in (EXPECTED_MISSING, SKIPPED_TREES):
        for reason, names in table.items():
            assert len(reason) > 20 and names, reason
