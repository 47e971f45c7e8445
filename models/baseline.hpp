#pragma once
// The named baseline every prediction is reported beside: the closed-form
// step time, no event simulation (docs/cost-models.md#the-closed-form-baseline).

#include "models/ddp_job.hpp"

namespace ddpsim::models {

/// data + forward + backward + optimizer + every rebuilt bucket's ring
/// all-reduce, none overlapped (one all-reduce of every gradient when DDP
/// does not rebuild), + the straggler model's expected slowest-rank delay.
/// With a comm hook, a step it compresses has the hook's all-reduces and
/// compute instead, none overlapped; the mean over the measured steps.
/// Gradient accumulation, faults and buffer broadcasts are not in it.
double closed_form_step_ms(const DdpJob& job, int world_size);

}  // namespace ddpsim::models
