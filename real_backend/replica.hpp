#pragma once
// One rank's model replica on its device, as the training loop drives it:
// forward, backward that hands each gradient bucket to the transport as soon
// as it and every lower-index bucket are ready, copy-back of the averaged
// bucket, and the optimizer step. Two implementations: the CPU one (Eigen,
// cpu_replica.cpp) and the GPU one (cuBLAS, gpu_replica.cu).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/parameters.hpp"
#include "models/reducer.hpp"
#include "real_backend/mlp.hpp"

namespace ddpsim::real {

struct ReplicaConfig {
  MlpShape shape;
  std::uint64_t seed = 0;               ///< initial parameters (rank 0's are broadcast)
  std::vector<models::Bucket> buckets;  ///< models::rebuilt_buckets of the MLP's spec
  int world_size = 1;                   ///< gradients are scaled by 1/W before the sum
  float lr = 0.01f;
  float momentum = 0.9f;
};

class Replica {
 public:
  /// (bucket index, buffer, element count): launch its all-reduce now.
  using LaunchBucket = std::function<void(int, float*, std::size_t)>;

  virtual ~Replica() = default;
  /// "cpu" or the GPU's name.
  virtual std::string device() const = 0;
  virtual std::size_t parameter_count() const = 0;
  /// Forward of `rows` examples (host, row-major; 0 rows allowed). Returns the loss.
  virtual float forward(const float* x, const float* y, int rows) = 0;
  /// Backward of the last forward; calls `launch` for every bucket, in index order.
  virtual void backward(const LaunchBucket& launch) = 0;
  /// Bucket `b`'s all-reduce is done: its averaged gradients replace the replica's.
  virtual void unpack(int b) = 0;
  /// Per layer (layers.0 first), the last forward's and backward's wall-clock
  /// times in ms; empty where the device does not measure them (GPU).
  virtual std::vector<double> layer_forward_ms() const = 0;
  virtual std::vector<double> layer_backward_ms() const = 0;
  /// SGD with momentum on the averaged gradients.
  virtual void optimizer_step() = 0;
  /// Host copies of the parameters and the optimizer's momentum.
  virtual void get_state(std::vector<float>& parameters, std::vector<float>& momentum) const = 0;
  virtual void set_state(const std::vector<float>& parameters, const std::vector<float>& momentum) = 0;
};

std::unique_ptr<Replica> make_cpu_replica(const ReplicaConfig& config);
/// Built with CUDA: a replica on the current GPU. Without: throws std::runtime_error.
std::unique_ptr<Replica> make_gpu_replica(const ReplicaConfig& config);

}  // namespace ddpsim::real
