"""The clocks profile times a step with: the host's on CPU, CUDA events on a GPU.

A clock's mark() is taken where the host reaches a point of the step (a
hook, the step's start and end); after the step, sync() and then
resolve(mark) give nanoseconds on one time line. On CPU the work runs on the
calling thread, so the host clock is the work's clock. On a GPU the host
only queues kernels: a CUDA event recorded at a mark completes when the GPU
reaches that point of the stream, which is when the work before it is done.
"""
import time

import torch


class HostClock:
    name = "host clock (time.perf_counter_ns)"

    def mark(self):
        return time.perf_counter_ns()

    def sync(self):
        pass

    def resolve(self, mark):
        return mark


class CudaClock:
    name = "CUDA events on the current stream"

    def __init__(self):
        self.origin = None

    def mark(self):
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        if self.origin is None:
            self.origin = event
        return event

    def sync(self):
        torch.cuda.synchronize()

    def resolve(self, event):
        return int(round(self.origin.elapsed_time(event) * 1e6))  # elapsed_time: ms, float


def for_device(device):
    return CudaClock() if device == "cuda" else HostClock()
