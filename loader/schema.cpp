#include "loader/schema.hpp"

#include <fmt/format.h>

#include <stdexcept>

// The meanings' definitions: docs/cost-models.md; PyTorch's behaviour:
// ../shared/reference/ddp_semantics.md. Each section's keys are declared in
// the order the loader lists them in its errors ("allowed here: ...").

namespace ddpsim::scenarios::schema {
namespace {

using T = Type;
constexpr std::string_view kReq = "**required**";

const std::vector<Key> kScenario = {
    {"name", T::kString, "", "", "the file's stem", "names the scenario in output"},
    {"description", T::kString, "", "", "none", "free text, for people"},
    {"seed", T::kInteger, "", ">= 0", "0", "seeds every random draw (jitter, sampler shuffle)"},
    {"engine", T::kChoice, "", "analytic, simgrid", "`analytic`",
     "how long collectives take: the formulas, or every transfer on a SimGrid platform "
     "(docs/cost-models.md#the-simgrid-engine), at most 16,384 ranks; `ddpsim run --engine` overrides it"},
    {"world_size", T::kIntegerOrList, "ranks", "1..1,048,576", kReq,
     "ranks; a list is a sweep, one result row per value, in file order"},
    {"training", T::kMapping, "", "", "", "the training loop"},
    {"training.iterations", T::kInteger, "", "1..10,000,000", "10", "optimizer steps simulated per world size"},
    {"training.epochs", T::kInteger, "", "1..10,000,000; epochs x iterations at most 10,000,000", "1",
     "epochs of `iterations` each (epochs x iterations at most 10,000,000); iterations are numbered globally, "
     "0 .. epochs x iterations - 1"},
    {"training.warmup_iterations", T::kInteger, "", "0..iterations-1", "2 (iterations-1 if smaller)",
     "first iterations left out of `step_ms` and per-rank means; iteration 0 follows construction, "
     "iteration 1 runs the bucket rebuild"},
    {"training.local_batch_size", T::kInteger, "", "1..16,777,216", "32",
     "samples per rank per micro-step; global batch = local x W x gradient_accumulation"},
    {"training.final_barrier", T::kBool, "", "", "true", "every rank runs `dist.barrier()` after its loop"},
    {"training.agree_on_skip", T::kBool, "", "", "false",
     "all-reduce a 4-byte skip flag after every forward; a `skip_backward` on any rank then skips on all"},
    {"training.join", T::kBool, "", "", "false",
     "each epoch's loop runs inside `torch.distributed.algorithms.Join`"},
    {"model", T::kMapping, "", "", kReq,
     "exactly one of `preset`, `parameters`, `gradient_bytes`, with whole-model times or `layers`"},
    {"model.preset", T::kChoice, "", "bert-base, gpt2-small, linear-8-1, resnet101, resnet18, resnet50, resnext101_32x8d, resnext50_32x4d",
     "one of preset, parameters, gradient_bytes is **required**",
     "parameters, ready order and buffers from `models/presets/`"},
    {"model.parameters", T::kList, "", "", "",
     "the tensors of `named_parameters()`, in registration order"},
    {"model.parameters[].name", T::kString, "", "unique", kReq, "the parameter's name"},
    {"model.parameters[].shape", T::kIntegerList, "", "list of integers >= 1 (`[]` for a scalar)", kReq,
     "the tensor's dimensions"},
    {"model.parameters[].dtype", T::kChoice, "", "float32, float16, bfloat16, float64, int64, int32, uint8, bool",
     "`float32`", "the element type"},
    {"model.gradient_ready_order", T::kNameList, "", "each parameter once", "reverse registration order",
     "the order gradients become ready in backward"},
    {"model.buffers", T::kList, "", "", "none",
     "buffers (BatchNorm statistics...), broadcast before forward; items as `model.parameters`"},
    {"model.buffers[].name", T::kString, "", "unique", kReq, "the buffer's name"},
    {"model.buffers[].shape", T::kIntegerList, "", "list of integers >= 1", kReq, "the tensor's dimensions"},
    {"model.buffers[].dtype", T::kChoice, "", "float32, float16, bfloat16, float64, int64, int32, uint8, bool",
     "`float32`", "the element type"},
    {"model.gradient_bytes", T::kInteger, "bytes", "1..2^50, a multiple of 4", "",
     "a one-block model: one fp32 gradient tensor"},
    {"model.forward_ms", T::kNumber, "ms", "0..1e9", "",
     "whole-model forward time, spread over the tensors in proportion to their element counts"},
    {"model.backward_ms", T::kNumber, "ms", "0..1e9", "", "whole-model backward time, spread likewise"},
    {"model.forward_gflops", T::kNumber, "GFLOP per local batch", "0..1e12", "",
     "instead of `forward_ms`: time = GFLOP / (device.peak_tflops x device.efficiency)"},
    {"model.backward_gflops", T::kNumber, "GFLOP per local batch", "0..1e12", "", "instead of `backward_ms`, likewise"},
    {"model.layers", T::kList, "", "", "",
     "per-layer times instead of whole-model ones, spread over the layer's tensors by element count; "
     "every parameter in exactly one layer"},
    {"model.layers[].name", T::kString, "", "", "none", "the layer's name, for people"},
    {"model.layers[].params", T::kNameList, "", "at least one, in no other layer", kReq,
     "the names of the layer's parameters"},
    {"model.layers[].forward_ms", T::kNumber, "ms", "0..1e9", "this or `forward_gflops` **required**",
     "the layer's forward time"},
    {"model.layers[].backward_ms", T::kNumber, "ms", "0..1e9", "this or `backward_gflops` **required**",
     "the layer's backward time"},
    {"model.layers[].forward_gflops", T::kNumber, "GFLOP per local batch", "0..1e12", "",
     "instead of `forward_ms`"},
    {"model.layers[].backward_gflops", T::kNumber, "GFLOP per local batch", "0..1e12", "",
     "instead of `backward_ms`"},
    {"model.layers[].activation_MB", T::kNumber, "MiB per local batch", "0..1e9", "0",
     "activations the layer keeps from forward for backward (memory only)"},
    {"model.optimizer_ms", T::kNumber, "ms", "0..1e9", "0", "optimizer step"},
    {"model.measured_on", T::kChoice, "", "cpu, cuda", "none",
     "where the model's times were measured (ddpsim_torch profile writes it): CPU times under a `cluster:` (GPUs) "
     "are marked in the table and the JSON"},
    {"model.activation_MB", T::kNumber, "MiB per local batch", "0..1e9", "0 (or the layers')",
     "activations the whole model keeps for backward, spread over the tensors by forward time (memory only; "
     "not with per-layer `activation_MB`)"},
    {"model.activation_checkpointing", T::kNameList, "", "module path patterns, `*` one component", "none",
     "modules whose forward is recomputed in backward: their activations are not kept, their forward time is "
     "added to their backward (docs/fsdp.md#memory)"},
    {"device", T::kMapping, "", "", "none", "the device: GFLOP into time (with a `_gflops` key), its memory"},
    {"device.peak_tflops", T::kNumber, "TFLOP/s", "(0, 1e9]", "required with any `_gflops`", "the device's peak"},
    {"device.efficiency", T::kNumber, "", "(0, 1]", "required with any `_gflops`", "fraction of peak achieved"},
    {"device.memory_GB", T::kNumber, "GiB (2^30 bytes, as torch.cuda counts)", "(0, 1e6]", "none (no limit)",
     "a rank whose predicted peak memory is above it fails with CUDA's out-of-memory error "
     "(docs/fsdp.md#memory)"},
    {"parallelism", T::kChoice, "", "ddp, fsdp", "`ddp`",
     "the training program: DistributedDataParallel, or FullyShardedDataParallel (the `fsdp` section)"},
    {"optimizer", T::kChoice, "", "sgd, sgd_momentum, adam, adamw", "`sgd`",
     "the optimizer's state, for memory: none, one buffer (momentum), two (exp_avg, exp_avg_sq), each the size "
     "and dtype of the parameters it steps"},
    {"fsdp", T::kMapping, "", "", "none (only with `parallelism: fsdp`)",
     "FullyShardedDataParallel's arguments, PyTorch's names (docs/fsdp.md#units)"},
    {"fsdp.sharding_strategy", T::kChoice, "", "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, _HYBRID_SHARD_ZERO2",
     "`FULL_SHARD`", "what is sharded and over which ranks (hybrid: a node's GPUs, replicated across nodes)"},
    {"fsdp.auto_wrap_policy", T::kMapping, "", "", "none (one unit, the root)",
     "which modules become units, as `_recursive_wrap` applies the policy; give one of its keys"},
    {"fsdp.auto_wrap_policy.min_num_params", T::kInteger, "parameters", "1..2^50", "",
     "size_based_auto_wrap_policy: a module whose parameters not yet wrapped reach this many"},
    {"fsdp.auto_wrap_policy.module_classes", T::kNameList, "", "module path patterns", "",
     "ModuleWrapPolicy: a class named by its instances' module paths, `*` for one component "
     "(`transformer.h.*` for GPT-2's blocks)"},
    {"fsdp.backward_prefetch", T::kChoice, "", "BACKWARD_PRE, BACKWARD_POST, none", "`BACKWARD_PRE`",
     "when backward all-gathers the next unit: before this unit's gradient compute, after it, or at its own turn"},
    {"fsdp.forward_prefetch", T::kBool, "", "", "false", "all-gather the next unit before this one's forward"},
    {"fsdp.limit_all_gathers", T::kBool, "", "", "true",
     "the rate limiter: at most two all-gathered units ahead of the CPU (PyTorch 2.1's default)"},
    {"fsdp.mixed_precision", T::kMapping, "", "", "none (the parameters' dtype throughout)", "MixedPrecision"},
    {"fsdp.mixed_precision.param_dtype", T::kChoice, "", "float32, float16, bfloat16", "the parameters'",
     "dtype of compute and of the all-gathers"},
    {"fsdp.mixed_precision.reduce_dtype", T::kChoice, "", "float32, float16, bfloat16", "`param_dtype`",
     "dtype of the reduce-scatters and all-reduces"},
    {"fsdp.gradient_accumulation", T::kInteger, "", "1..1,048,576", "1",
     "micro-steps per optimizer step, all but the last under `no_sync()` (no reduction; unsharded gradients kept)"},
    {"ddp", T::kMapping, "", "", "", "DistributedDataParallel's arguments"},
    {"ddp.bucket_cap_mb", T::kNumberOrList, "MiB", "(0, 1e6]", "25", "bucket cap; a list is a second sweep axis"},
    {"ddp.first_bucket_mb", T::kNumber, "MiB", "(0, 1e6]", "1, or `bucket_cap_mb` when that is given",
     "cap of the first rebuilt bucket. As `DistributedDataParallel` since PyTorch 2.3 (`_BucketCapacityConfig.create` "
     "in torch/nn/parallel/distributed.py): `DDP(model)` caps it at `dist._DEFAULT_FIRST_BUCKET_BYTES` (1 MiB), "
     "`DDP(model, bucket_cap_mb=X)` at X; so a scenario that gives `bucket_cap_mb` and not this key has a first bucket "
     "of `bucket_cap_mb` (each cap of a list its own). Give this key to pin it (PyTorch 1.x: always 1)"},
    {"ddp.find_unused_parameters", T::kBool, "", "", "false",
     "as PyTorch: small construction buckets, no rebuild, graph traversal, used-map all-reduce"},
    {"ddp.static_graph", T::kBool, "", "", "false", "rebuild at the third forward; no traversal"},
    {"ddp.broadcast_buffers", T::kBool, "", "", "true", "broadcast buffers before each syncing forward"},
    {"ddp.gradient_accumulation", T::kInteger, "", "1..1,048,576", "1",
     "micro-steps per optimizer step, all but the last under `no_sync()`"},
    {"ddp.unused_parameters", T::kNameList, "", "each once", "none", "parameters that get no gradient"},
    {"ddp.traversal_us_per_tensor", T::kNumber, "us", "0..1e12", "1",
     "`find_unused_parameters`: autograd-graph walk per parameter tensor after every forward"},
    {"ddp.gradient_as_bucket_view", T::kBool, "", "", "false",
     "gradients are views into the buckets: no separate bucket memory (memory only)"},
    {"ddp.bucket_copy_GBps", T::kNumber, "GB/s", "(0, 1e6]", "none (free)",
     "DDP's per-byte work: each gradient copied into its bucket at its hook and back out after the bucket's "
     "all-reduce (`profile` measures it at one rank)"},
    {"ddp.comm_hook", T::kChoiceOrMapping, "", "allreduce, fp16_compress, bf16_compress, powerSGD, batched_powerSGD",
     "`allreduce`",
     "DistributedDataParallel.register_comm_hook, by PyTorch's name; or a mapping with `name` and the keys below "
     "(docs/cost-models.md#communication-hooks)"},
    {"ddp.comm_hook.name", T::kChoice, "", "allreduce, fp16_compress, bf16_compress, powerSGD, batched_powerSGD",
     "**required**", "the hook; `bf16_compress` needs `nccl` (gloo cannot all-reduce bfloat16)"},
    {"ddp.comm_hook.matrix_approximation_rank", T::kInteger, "", "1..1,024", "1", "PowerSGDState: the rank of P and Q"},
    {"ddp.comm_hook.start_powerSGD_iter", T::kInteger, "", "0..10,000,000", "1000",
     "PowerSGDState: syncing steps all-reduced as they are before compression starts; at least 2 with error "
     "feedback or warm start"},
    {"ddp.comm_hook.min_compression_rate", T::kNumber, "", "0..1e9", "2",
     "PowerSGDState: a tensor is compressed only if (n + m) r times this is below n m"},
    {"ddp.comm_hook.use_error_feedback", T::kBool, "", "", "true",
     "PowerSGDState: keep each bucket's compression error and add it back (one bucket-sized buffer a bucket)"},
    {"ddp.comm_hook.warm_start", T::kBool, "", "", "true", "PowerSGDState: keep P and Q between steps"},
    {"ddp.comm_hook.orthogonalization_epsilon", T::kNumber, "", "0..1", "0",
     "PowerSGDState: added to each column's norm (no cost of its own)"},
    {"ddp.comm_hook.cast_GBps", T::kNumber, "GB/s", "(0, 1e9]", "1000 (nccl), 2 (gloo): stated, not measured",
     "fp32 bytes cast to half precision (and back) per second; `profile --comm-hook` measures it"},
    {"ddp.comm_hook.pass_GBps", T::kNumber, "GB/s", "(0, 1e9]", "1000 (nccl), 4 (gloo): stated, not measured",
     "fp32 bytes per second of one elementwise pass (error feedback, copies; a thin matrix product's read)"},
    {"ddp.comm_hook.matmul_GFLOPs", T::kNumber, "GFLOP/s", "(0, 1e9]", "20000 (nccl), 20 (gloo): stated, not measured",
     "PowerSGD's matrix products and orthogonalisation"},
    {"ddp.comm_hook.alloc_GBps", T::kNumber, "GB/s", "(0, 1e9]", "free (nccl), 2 (gloo): stated, not measured",
     "first touch of each tensor the hook allocates a step (a CPU's page faults), beyond the pass that fills it"},
    {"ddp.comm_hook.op_us", T::kNumber, "us", "0..1e12", "10 (nccl), 5 (gloo): stated, not measured",
     "each torch call the hook's Python makes (ops counted from PyTorch's source)"},
    {"data", T::kMapping, "", "", "", "data loading and the DistributedSampler"},
    {"data.load_ms", T::kNumber, "ms", "0..1e9", "0", "host-side data loading per micro-step, before forward"},
    {"data.dataset_size", T::kInteger, "examples", "1..2^40", "none",
     "N examples: adds a DistributedSampler audit to the result"},
    {"data.shuffle", T::kBool, "", "", "true", "DistributedSampler(shuffle); needs `dataset_size`"},
    {"data.drop_last", T::kBool, "", "", "false", "DistributedSampler(drop_last); needs `dataset_size`"},
    {"data.set_epoch", T::kBool, "", "", "true", "false: the script never calls set_epoch; needs `dataset_size`"},
    {"data.epochs", T::kInteger, "", "1..1000", "1", "epochs audited; needs `dataset_size`"},
    {"collective", T::kMapping, "", "", "**required** without `cluster`", "the process group and its network"},
    {"collective.backend", T::kChoice, "", "nccl, gloo", "`nccl`",
     "what a mismatched pair of collectives does (docs/runbook.md), and how a broadcast moves: NCCL's pipelined down a "
     "ring, gloo's the whole buffer down a binomial tree (docs/cost-models.md)"},
    {"collective.algorithm", T::kChoice, "", "ring, hierarchical, auto, binomial", "`ring`",
     "all-reduce algorithm: one ring over all ranks, or reduce-scatter inside each node, one inter-node ring "
     "per local GPU, all-gather inside each node (only on whole nodes of a cluster with more than one node; "
     "otherwise the ring); `auto`: per call the faster of a ring with a channel per NIC and the hierarchical "
     "all-reduce on shared NICs, as NCCL picks per call (docs/cost-models.md#the-per-call-choice-auto); "
     "`binomial`: Open MPI's non-blocking in-place all-reduce, the whole buffer up a binomial tree to rank 0 and "
     "down one (ddpsim-real's; docs/cost-models.md#open-mpis-binomial-all-reduce)"},
    {"collective.model", T::kChoice, "", "ring, nccl", "`ring`",
     "how a collective is priced: alpha-beta ring formulas, or NCCL's own tuning model (its algorithm and "
     "protocol choice; docs/cost-models.md#nccls-tuning-model), which needs a `cluster` with `gpu`, the "
     "analytic engine and the nccl backend"},
    {"collective.bandwidth_scale", T::kNumber, "", "(0, 100]", "1",
     "`nccl` model: NCCL's bandwidths times this (`ddpsim calibrate --nccl-tests` fits it)"},
    {"collective.latency_us", T::kNumber, "us", "0..1e12", "**required** without `cluster`, refused with it",
     "alpha: latency of one ring step"},
    {"collective.bandwidth_GBps", T::kNumber, "GB/s (10^9 B/s)", "(0, 1e6]",
     "**required** without `cluster`, refused with it", "link bandwidth"},
    {"collective.placeholder", T::kBool, "", "", "false",
     "the latency and bandwidth here are placeholders, not measured (ddpsim_torch profile writes true without "
     "--collective): the table and the JSON say so beside every prediction; a calibration's collective clears it"},
    {"collective.launch_overhead_us", T::kNumber, "us", "0..1e12", "0",
     "fixed cost per collective (the `nccl` model: the launch and synchronisation NCCL's model leaves out)"},
    {"watchdog", T::kMapping, "", "", "", "the collective watchdog"},
    {"watchdog.timeout_s", T::kNumber, "s", "0..1e7", "600 (nccl), 1800 (gloo)",
     "a rank waiting this long in a collective aborts the job; 0: never"},
    {"debug", T::kMapping, "", "", "", "PyTorch's debug settings"},
    {"debug.fingerprint", T::kBool, "", "", "false",
     "TORCH_DISTRIBUTED_DEBUG=DETAIL: an all-gather of a 64-byte fingerprint per rank before every collective "
     "(priced), and every rank fails at the first collective whose op or size differs; under FSDP, in the first "
     "iteration, the forward-order check's all-gathers of each unit's index too, and after it a warning from a rank "
     "whose order changed (docs/fsdp.md#faults-and-hangs)"},
    {"contention", T::kMapping, "", "", "none",
     "what communication and compute running at once cost each other (docs/cost-models.md#compute-slowed-by-communication)"},
    {"contention.compute_slowdown", T::kNumber, "", "0..1000", "0",
     "while a collective is in flight on a rank, its compute takes 1 + this times as long; "
     "`ddpsim calibrate --scenario` fits it to a multi-rank run; `ddpsim_torch overlap` measures it"},
    {"contention.comm_slowdown", T::kNumber, "", "0..1e6", "0",
     "while any member of a collective in flight computes, the collective takes 1 + this times as long (Open "
     "MPI's polled progress on shared cores measured 88 to 464: hardly any progress beside compute); "
     "`ddpsim_torch overlap` measures it (docs/cost-models.md#compute-slowed-by-communication)"},
    {"straggler", T::kMapping, "", "", "", "slow ranks (docs/cost-models.md#stragglers)"},
    {"straggler.model", T::kChoice, "", "none, log2, jitter", "`none`", "see docs/cost-models.md#stragglers"},
    {"straggler.penalty_ms", T::kNumber, "ms", "0..1e9", "**required** for `log2`",
     "slow rank's extra backward time per doubling of W"},
    {"straggler.rank", T::kInteger, "", "-1..min(world_size)-1", "-1 (the last rank)", "`log2`: which rank is slow"},
    {"straggler.distribution", T::kChoice, "", "exponential, uniform", "`exponential`",
     "`jitter`: the per-rank, per-iteration delay"},
    {"straggler.mean_ms", T::kNumber, "ms", "(0, 1e9]", "**required** for `exponential`", "mean delay"},
    {"straggler.max_ms", T::kNumber, "ms", "(0, 1e9]", "**required** for `uniform`", "delays lie in [0, max_ms)"},
    {"faults", T::kList, "", "", "none", "what given ranks do differently (the fault table below)"},
    {"faults[].type", T::kChoice, "",
     "skip_backward, skip_iteration, uneven_batches, extra_collective, unused_parameters, slowdown, slow_link, "
     "rank0_artifact, crash, skip_unit, micro_batches, link_down",
     kReq, "the kind of fault"},
    {"faults[].rank", T::kIntegerOrList, "", "0..min(world_size)-1", "**required** but for `rank0_artifact`",
     "the ranks it applies to"},
    {"faults[].iteration", T::kInteger, "", "0..epochs x iterations - 1", "", "the global iteration"},
    {"faults[].fewer", T::kInteger, "", "1..iterations-1", "", "`uneven_batches`: batches fewer per epoch"},
    {"faults[].op", T::kChoice, "", "all_reduce, broadcast, barrier", "`all_reduce`",
     "`extra_collective`: the collective"},
    {"faults[].bytes", T::kInteger, "bytes", "0..2^40", "4", "`extra_collective`: its size"},
    {"faults[].parameters", T::kNameList, "", "each once", "", "`unused_parameters`: the parameters"},
    {"faults[].factor", T::kNumber, "", "(0, 1e6]; slow_link: 1..1e6", "", "`slowdown`, `slow_link`: how much slower"},
    {"faults[].from_iteration", T::kInteger, "", "0..epochs x iterations - 1", "0", "`slowdown`: first iteration"},
    {"faults[].to_iteration", T::kInteger, "", "from_iteration..epochs x iterations - 1", "the last",
     "`slowdown`: last iteration, inclusive"},
    {"faults[].target", T::kChoice, "", "compute, data", "`compute`", "`slowdown`: what is slower"},
    {"faults[].duration_ms", T::kNumber, "ms", "0..1e9", "", "`rank0_artifact`: how long it writes"},
    {"faults[].every", T::kInteger, "", "1..epochs x iterations", "", "`rank0_artifact`: every N iterations"},
    {"faults[].at_ms", T::kNumber, "ms", "0..1e9", "", "`crash`: the time it dies; `link_down`: the time its link goes down; `slow_link`: the time it slows (none: from the start; refused under hybrid sharding)"},
    {"faults[].unit", T::kString, "", "a unit's module path, not the root", "",
     "`skip_unit`: the FSDP unit the rank does not call"},
    {"faults[].count", T::kInteger, "", "1..1,048,576", "", "`micro_batches`: the rank's micro-batches in the iteration"},
    {"failures", T::kMapping, "", "", "none", "failures arriving over a horizon; needs `checkpoint`"},
    {"failures.mtbf_hours", T::kNumber, "hours", "(0, 1e12]", kReq, "mean time between failures"},
    {"failures.per", T::kChoice, "", "gpu, job", "`gpu`", "per GPU (the job's MTBF is mtbf / W) or for the whole job"},
    {"failures.detection", T::kChoice, "", "watchdog, heartbeat", "`watchdog`",
     "how a dead rank is noticed: the collective watchdog (`watchdog.timeout_s`) or the launcher's heartbeat"},
    {"failures.heartbeat_s", T::kNumber, "s", "0..1e7", "30", "heartbeat detection delay"},
    {"failures.relaunch_s", T::kNumber, "s", "0..1e7", kReq,
     "tear down, reschedule, restart processes, initialise NCCL"},
    {"failures.horizon_hours", T::kNumber, "hours", "(0, 1e7]", "24", "wall-clock time over which failures arrive (seeded)"},
    {"failures.corrupt_latest", T::kBool, "", "", "false", "the first failure finds the latest checkpoint unreadable"},
    {"failures.restart_world_size", T::kInteger, "ranks", "1..min(cluster GPUs, 1,048,576)", "none",
     "elastic: after a crash the job resumes on this many ranks"},
    {"failures.restart_budget_min", T::kNumber, "minutes", "(0, 1e7]", "15",
     "a crash's restart must fit in this (the seed's \"restart under 15 minutes\")"},
    {"checkpoint", T::kMapping, "", "", "none", "checkpoints, to price failures and restarts"},
    {"checkpoint.interval_min", T::kNumber, "minutes of training", "(0, 1e7]", kReq, "time between checkpoints"},
    {"checkpoint.size_gb", T::kNumber, "GB", "(0, 1e9]", "16 bytes per parameter", "full training state (Adam rule of thumb)"},
    {"checkpoint.write_GBps", T::kNumber, "GB/s", "(0, 1e6]", kReq, "storage write bandwidth for the job"},
    {"checkpoint.read_GBps", T::kNumber, "GB/s", "(0, 1e6]", kReq, "storage read bandwidth for the job"},
    {"checkpoint.async", T::kBool, "", "", "false", "written in the background: no stall, valid once written"},
    {"checkpoint.keep_last", T::kInteger, "", "1..1000", "2", "checkpoints kept; a corrupt latest falls back only with >= 2"},
    {"calibration", T::kPath, "", "relative to the scenario's folder", "none",
     "a calibration file (`ddpsim calibrate --out`; its keys below): its values replace the scenario's; "
     "checked like a scenario, errors name the calibration file"},
    {"validation", T::kMapping, "", "", "", "what `ddpsim validate` accepts"},
    {"validation.max_error_pct", T::kNumber, "%", "(0, 1e6]", "none",
     "`ddpsim validate` exits 3 when a predicted step time misses the measured one by more"},
    {"cluster", T::kMapping, "", "", "none", "nodes of GPUs and their fabrics, instead of `collective`'s one route"},
    {"cluster.nodes", T::kInteger, "", "1..1,048,576", kReq,
     "nodes; rank r runs on GPU r % gpus_per_node of node r / gpus_per_node; every world size must fit"},
    {"cluster.gpus_per_node", T::kInteger, "", "1..65,536", kReq, "GPUs per node, one rank each"},
    {"cluster.gpu", T::kChoice, "", "volta, ampere, hopper, blackwell", "**required** with `collective.model: nccl`",
     "the GPU generation, for NCCL's tuning model (its protocol caps and channel search)"},
    {"cluster.nics_per_node", T::kInteger, "", "1..gpus_per_node", "1",
     "NICs per node; GPU g uses NIC g * nics / gpus_per_node (only with nodes > 1)"},
    {"cluster.intra", T::kMapping, "", "", kReq, "the fabric inside a node"},
    {"cluster.intra.topology", T::kChoice, "", "star, ring", "`star`",
     "NVSwitch-like switch (one link per GPU; NCCL's model adds NVLS on hopper and later) or a ring of links between neighbouring GPUs"},
    {"cluster.intra.bandwidth_GBps", T::kNumber, "GB/s", "(0, 1e6]", kReq,
     "route bandwidth between two GPUs of a node (a ring: of one link)"},
    {"cluster.intra.latency_us", T::kNumber, "us", "0..1e12", kReq,
     "route latency between two GPUs of a node (star: half on each GPU's link; a ring: per link)"},
    {"cluster.intra.duplex", T::kChoice, "", "full, half", "`full`", "half: a link's two directions share its bandwidth"},
    {"cluster.intra.link", T::kChoice, "", "nvlink, pcie", "`nvlink`",
     "NVLink (bandwidth_GBps a GPU's NVLink total) or PCIe between a node's GPUs: NCCL's model reads it; on PCIe a "
     "star's GPU links also carry the GPU's traffic to its NIC"},
    {"cluster.intra.gpus_per_switch", T::kInteger, "", "a divisor of gpus_per_node", "gpus_per_node",
     "PCIe nodes (`link: pcie`, a star) only: GPUs behind one PCIe switch; a route between two switches crosses both "
     "uplinks, and nics_per_node must put a NIC under each switch"},
    {"cluster.intra.uplink_GBps", T::kNumber, "GB/s", "(0, 1e6]", "**required** with gpus_per_switch < gpus_per_node",
     "a PCIe switch's uplink, each direction (a PCIe x16 link, or what the CPUs between switches sustain)"},
    {"cluster.intra.nodes_per_switch", T::kInteger, "", "refused", "", "only a fat_tree (`inter`) has leaf switches"},
    {"cluster.intra.collnet", T::kBool, "", "refused", "", "only `inter` reduces in its switches"},
    {"cluster.intra.oversubscription", T::kNumber, "", "refused", "",
     "only a fat_tree (`inter`) has oversubscribed uplinks"},
    {"cluster.inter", T::kMapping, "", "", "**required** with nodes > 1, refused with one node",
     "the network between nodes"},
    {"cluster.inter.topology", T::kChoice, "", "star, fat_tree", "`star`", "one switch, or a two-level fat tree"},
    {"cluster.inter.bandwidth_GBps", T::kNumber, "GB/s", "(0, 1e6]", kReq, "per NIC and direction"},
    {"cluster.inter.latency_us", T::kNumber, "us", "0..1e12", kReq, "NIC to NIC, half on each NIC's link"},
    {"cluster.inter.duplex", T::kChoice, "", "full, half", "`full`", "half: a link's two directions share its bandwidth"},
    {"cluster.inter.link", T::kChoice, "", "refused", "", "only `intra` has a link kind"},
    {"cluster.inter.nodes_per_switch", T::kInteger, "", "1..1,048,576", "**required** for `fat_tree`",
     "nodes under one leaf switch"},
    {"cluster.inter.oversubscription", T::kNumber, "", "1..1e6", "1",
     "fat tree: a leaf's uplink carries nodes_per_switch x nics_per_node x bandwidth / this"},
    {"cluster.inter.collnet", T::kBool, "", "", "false",
     "the switches reduce (InfiniBand SHARP with NCCL's CollNet plugin, NCCL_COLLNET_ENABLE=1): NCCL's model adds "
     "CollNetDirect and CollNetChain for all_reduce, and NVLS across nodes (collective.model nccl only; "
     "docs/cost-models.md#nccls-tuning-model)"},
    {"simgrid", T::kMapping, "", "", "", "the SimGrid engine's settings"},
    {"simgrid.config", T::kMapping, "", "", "none",
     "SimGrid settings, applied after ddpsim's own (CM02, TCP-gamma 0, no cross-traffic), each checked at load"},
    {"simgrid.config.network/model", T::kChoice, "", "CM02, LV08, SMPI, IB", "`CM02`",
     "SimGrid's network model (LV08: its calibrated TCP model; Constant is refused: it has no links)"},
    {"simgrid.config.network/TCP-gamma", T::kNumber, "bytes", "0..1e30", "0", "the TCP window bound"},
    {"simgrid.config.network/crosstraffic", T::kBool, "", "", "false", "model the ACKs' reverse traffic"},
    {"simgrid.config.network/latency-factor", T::kNumber, "", "0..1e30", "the model's", "latency multiplier"},
    {"simgrid.config.network/bandwidth-factor", T::kNumber, "", "(0, 1e6]", "the model's", "bandwidth multiplier"},
    {"simgrid.config.network/weight-S", T::kNumber, "", "0..1e30", "the model's", "RTT weight in sharing"},
    {"simgrid.config.surf/precision", T::kNumber, "", "(0, 1]", "SimGrid's", "numerical tolerance of the solver's clock"},
    {"simgrid.config.maxmin/precision", T::kNumber, "", "(0, 1]", "SimGrid's", "numerical tolerance of the sharing solver"},
    {"simgrid.memoize", T::kBool, "", "", "true",
     "simulate each distinct collective once and reuse its time (exact, docs/cost-models.md#the-simgrid-engine); "
     "false simulates every one"},
};

// `ddpsim calibrate --out` writes these; `calibration:` and `--calibration`
// read them. The layers' and the straggler's keys are the scenario's.
const std::vector<Key> kCalibrationOwn = {
    {"collective", T::kMapping, "", "", "none", "the fitted collective cost (refused for a scenario with a cluster)"},
    {"collective.latency_us", T::kNumber, "us", "0..1e12", "the scenario's", "alpha: latency of one ring step"},
    {"collective.bandwidth_GBps", T::kNumber, "GB/s (10^9 B/s)", "(0, 1e6]", "the scenario's", "link bandwidth"},
    {"collective.launch_overhead_us", T::kNumber, "us", "0..1e12", "the scenario's", "fixed cost per collective"},
    {"collective.algorithm", T::kChoice, "", "ring, binomial", "`ring`",
     "the all-reduce the latency and bandwidth were fitted as (`calibrate --algorithm`); must be the scenario's "
     "binomial or not"},
    {"collective.bandwidth_scale", T::kNumber, "", "(0, 100]", "the scenario's",
     "NCCL's bandwidths times this (`--nccl-tests`; only for a scenario with `collective.model: nccl`)"},
    {"model", T::kMapping, "", "", "none", "measured compute times"},
    {"model.layers", T::kList, "", "", "the scenario's", "per-layer times, as the scenario's `model.layers`"},
    {"model.forward_ms", T::kNumber, "ms", "0..1e9", "the scenario's", "whole-model forward time"},
    {"model.backward_ms", T::kNumber, "ms", "0..1e9", "the scenario's", "whole-model backward time"},
    {"model.optimizer_ms", T::kNumber, "ms", "0..1e9", "the scenario's", "optimizer step"},
    {"data", T::kMapping, "", "", "none", "measured data loading"},
    {"data.load_ms", T::kNumber, "ms", "0..1e9", "the scenario's", "data loading per micro-step"},
    {"straggler", T::kMapping, "", "", "the scenario's", "the fitted straggler model, keys as the scenario's `straggler`"},
    {"contention", T::kMapping, "", "", "the scenario's", "the fitted contention term, keys as the scenario's `contention`"},
};

const std::vector<Key> kPreset = {
    {"name", T::kString, "", "", "", "the preset's name"},
    {"parameters", T::kList, "", "", kReq, "as a scenario's `model.parameters`"},
    {"gradient_ready_order", T::kNameList, "", "each parameter once", "reverse registration order",
     "as a scenario's `model.gradient_ready_order`"},
    {"buffers", T::kList, "", "", "none", "as a scenario's `model.buffers`"},
};

// In FaultType's order (models/faults.hpp).
const std::vector<FaultKind> kFaultKinds = {
    {"skip_backward", {"rank", "iteration"}, "`iteration`", "forward runs, backward does not: no hook, no all-reduce"},
    {"skip_iteration", {"rank", "iteration"}, "`iteration`", "loads its batch, then `continue`s before forward"},
    {"uneven_batches", {"rank", "fewer"}, "`fewer` (1..iterations-1)", "runs `fewer` batches less per epoch"},
    {"extra_collective", {"rank", "iteration", "op", "bytes"},
     "`iteration`, `op` (all_reduce, broadcast, barrier; default all_reduce), `bytes` (default 4)",
     "issues one more collective after its step and waits for it"},
    {"unused_parameters", {"rank", "iteration", "parameters"}, "`iteration`, `parameters` (names)",
     "those parameters get no gradient in that iteration"},
    {"slowdown", {"rank", "factor", "from_iteration", "to_iteration", "target"},
     "`factor` (> 0), `from_iteration` (0), `to_iteration` (last), `target` (compute or data)",
     "compute (forward, backward, optimizer) or data loading takes `factor` times longer"},
    {"slow_link", {"rank", "factor", "at_ms"}, "`factor` (>= 1), `at_ms` (none: from the start)",
     "the ring link leaving the rank runs at bandwidth / factor, for every run that includes the rank: from the start, "
     "or from `at_ms` on (a link that slows to a trickle mid-run; the collectives in flight then finish at the new rate)"},
    {"rank0_artifact", {"iteration", "every", "duration_ms"}, "`iteration` or `every`, `duration_ms`",
     "rank 0 writes logs or a checkpoint on the host after its step"},
    {"crash", {"rank", "iteration", "at_ms"}, "`iteration` or `at_ms`",
     "the process dies at the start of the iteration, or at the time"},
    {"skip_unit", {"rank", "iteration", "unit"}, "`iteration`, `unit` (a module path)",
     "FSDP: the rank does not call that unit's module in the iteration (nor the units inside it)"},
    {"micro_batches", {"rank", "iteration", "count"}, "`iteration`, `count`",
     "FSDP: the rank runs `count` micro-batches in the iteration instead of `fsdp.gradient_accumulation`"},
    {"link_down", {"rank", "at_ms"}, "`at_ms`",
     "the rank's network link goes down at the time (a cut cable, a dead switch port): the process lives on, and "
     "every collective with it waits from then on, until the watchdog (docs/runbook.md)"},
};

std::string_view parent_of(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

std::string_view leaf_of(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::vector<std::string_view> split_list(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(", ");
    out.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 2);
  }
  return out;
}

}  // namespace

const std::vector<Key>& scenario_keys() { return kScenario; }
const std::vector<Key>& calibration_keys() {
  static const std::vector<Key> keys = [] {
    std::vector<Key> out = kCalibrationOwn;
    for (const Key& k : kScenario) {
      // Measured times only: a calibration has no device to turn GFLOP into time.
      const bool layer_key = k.path.starts_with("model.layers[].") && !k.path.ends_with("_gflops");
      if (layer_key || k.path.starts_with("straggler.") || k.path.starts_with("contention.")) out.push_back(k);
    }
    return out;
  }();
  return keys;
}
const std::vector<Key>& preset_keys() { return kPreset; }
const std::vector<FaultKind>& fault_kinds() { return kFaultKinds; }

const FaultKind* fault_kind(std::string_view type) {
  for (const FaultKind& k : kFaultKinds) {
    if (k.type == type) return &k;
  }
  return nullptr;
}

std::vector<std::string_view> fault_keys() {
  std::vector<std::string_view> out = children(kScenario, "faults[]");
  out.erase(out.begin());  // type
  return out;
}

std::vector<std::string_view> children(const std::vector<Key>& keys, std::string_view section) {
  std::vector<std::string_view> out;
  for (const Key& k : keys) {
    if (parent_of(k.path) == section) out.push_back(leaf_of(k.path));
  }
  return out;
}

const Key& key(const std::vector<Key>& keys, std::string_view path) {
  for (const Key& k : keys) {
    if (k.path == path) return k;
  }
  throw std::logic_error(fmt::format("schema: no key '{}' is declared", path));
}

std::vector<std::string_view> choices(const std::vector<Key>& keys, std::string_view path) {
  const Key& k = key(keys, path);
  if (k.type != Type::kChoice && k.type != Type::kChoiceOrMapping) {
    throw std::logic_error(fmt::format("schema: '{}' is not a choice", path));
  }
  return split_list(k.range);
}

}  // namespace ddpsim::scenarios::schema
