#pragma once
// PyTorch's process groups as collective libraries (sim::CollectiveLibrary):
// NCCL's and gloo's matching rules and error texts, what a barrier sends,
// and TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check, in one place
// (../shared/reference/ddp_semantics.md section 3). The engine and the
// levelized evaluator both take one.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sim/collective_library.hpp"

namespace ddpsim::models {

/// kNccl: a barrier is a 4-byte all-reduce; any other mismatch never
/// completes (undefined behaviour, seen as a hang). kGloo: an all-reduce
/// size mismatch aborts the ranks with the smaller buffer, and a peer's
/// death closes every rank's pending collective with it; other mismatches hang.
enum class Backend : std::uint8_t { kNccl, kGloo };

/// What a debug check reads from the data of the collective under `label`
/// (FSDP's forward-order check: "[transformer.h.7]", the unit whose index
/// it all-gathers); nullopt: nothing it checks.
using ContentReader = std::function<std::optional<std::string>(sim::OpLabel)>;

/// What a barrier is timed as, by every cost model: an all-reduce of this many bytes.
inline constexpr std::int64_t kBarrierBytes = 4;
/// The collective a cost model prices for `c`: a barrier as a
/// kBarrierBytes all-reduce, anything else as it is.
sim::Collective priced_as(sim::Collective c);

/// `backend`'s process group; with `fingerprint_bytes` above zero, under
/// TORCH_DISTRIBUTED_DEBUG=DETAIL: before each collective the ranks
/// all-gather a fingerprint (op, sequence number, sizes) of that many bytes
/// each, and all fail at the first collective whose fingerprints differ;
/// and a collective whose members agree in kind and size but whose data,
/// as `reads` finds it in their labels, differs fails every member with
/// FSDP's forward-order check's "Forward order differs across ranks".
std::unique_ptr<sim::CollectiveLibrary> collective_library(Backend backend, std::int64_t fingerprint_bytes = 0,
                                                           ContentReader reads = {});

}  // namespace ddpsim::models
