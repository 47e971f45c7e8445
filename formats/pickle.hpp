#pragma once
// A reader for the pickles PyTorch's flight recorder writes: the opcodes of
// protocols 2 to 5 that plain data needs (dicts, lists, tuples, strings,
// integers, floats, booleans, None), the memo, and the one global torch's
// C++ pickler calls on them (torch.jit._pickle.build_intlist and its
// siblings, which return their list). Anything else (objects, tensors,
// persistent ids) is refused. Internal to formats/.

#include <nlohmann/json.hpp>

#include <string_view>

namespace ddpsim::formats::detail {

/// The pickled value as JSON (tuples become lists). Throws FormatError with
/// the byte offset on anything it does not read.
nlohmann::json unpickle(std::string_view bytes);

}  // namespace ddpsim::formats::detail
