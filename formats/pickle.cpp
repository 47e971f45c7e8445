#include "formats/pickle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "formats/measured_run.hpp"  // FormatError

namespace ddpsim::formats::detail {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxDepth = 10000;  // marks and values on the stack at once
constexpr int kMaxNesting = 64;           // containers inside containers: a dump nests 4 deep
constexpr std::size_t kMaxMemoWeight = 1u << 24;  // values copied out of the memo, counted in elements

class Unpickler {
 public:
  explicit Unpickler(std::string_view b) : b_(b) {}

  Json run() {
    while (true) {
      const std::size_t at = pos_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      if (op == '.') break;  // STOP
      step(op, at);
      if (stack_.size() > kMaxDepth || marks_.size() > kMaxDepth) fail(at, "nested too deep");
    }
    if (stack_.size() != 1) fail(pos_, "expected one value at STOP");
    return std::move(stack_.back());
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw FormatError("", "", fmt::format("pickle byte {}: {}", at, what));
  }

  std::string_view take(std::size_t n) {
    if (n > b_.size() - pos_) fail(pos_, "truncated");
    const std::string_view out = b_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  std::uint64_t le(std::size_t n) {
    const std::string_view s = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
    return v;
  }

  std::string line() {
    const std::size_t end = b_.find('\n', pos_);
    if (end == std::string_view::npos) fail(pos_, "truncated line");
    std::string out(b_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  // Pushes a value `nesting` containers deep.
  void push(Json v, int nesting) {
    if (nesting > kMaxNesting) fail(pos_, fmt::format("containers nested deeper than {}", kMaxNesting));
    stack_.push_back(std::move(v));
    nesting_.push_back(nesting);
  }

  Json pop(std::size_t at, int* nesting = nullptr) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail(at, "stack underflow");
    Json v = std::move(stack_.back());
    if (nesting != nullptr) *nesting = nesting_.back();
    stack_.pop_back();
    nesting_.pop_back();
    return v;
  }

  // The items pushed since the last MARK, which is removed; `nesting` gets the deepest.
  std::vector<Json> since_mark(std::size_t at, int& nesting) {
    if (marks_.empty()) fail(at, "no MARK");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Json> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                            std::make_move_iterator(stack_.end()));
    nesting = 0;
    for (std::size_t i = m; i < nesting_.size(); ++i) nesting = std::max(nesting, nesting_[i]);
    stack_.resize(m);
    nesting_.resize(m);
    return items;
  }

  // Items (`nesting` deep) go into the container on top, one level up.
  void deepen(std::size_t at, int nesting) {
    if (nesting_.empty()) fail(at, "stack underflow");
    nesting_.back() = std::max(nesting_.back(), nesting + 1);
    if (nesting_.back() > kMaxNesting) fail(at, fmt::format("containers nested deeper than {}", kMaxNesting));
  }

  Json& top(std::size_t at) {
    if (stack_.empty()) fail(at, "stack underflow");
    return stack_.back();
  }

  void set_items(std::size_t at, std::vector<Json> items) {
    Json& d = top(at);
    if (!d.is_object() || items.size() % 2 != 0) fail(at, "SETITEMS on something other than a dict");
    for (std::size_t i = 0; i < items.size(); i += 2) {
      const Json& k = items[i];
      // A key that is not a string is named by its JSON; bytes that are not UTF-8 (a pickle's strings may
      // hold any) are replaced there, not thrown on.
      d[k.is_string() ? k.get<std::string>() : k.dump(-1, ' ', false, Json::error_handler_t::replace)] =
          std::move(items[i + 1]);
    }
  }

  void append(std::size_t at, std::vector<Json> items) {
    Json& l = top(at);
    if (!l.is_array()) fail(at, "APPEND on something other than a list");
    for (Json& v : items) l.push_back(std::move(v));
  }

  void memo_put(std::size_t at, std::uint64_t key) {
    if (key > (1u << 24)) fail(at, "memo key too large");
    memo_[key] = {top(at), nesting_.back()};
  }

  void memo_get(std::size_t at, std::uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) fail(at, fmt::format("memo key {} not set", key));
    copied_ += it->second.first.is_structured() ? it->second.first.size() + 1 : 1;
    if (copied_ > kMaxMemoWeight) fail(at, "too many values copied from the memo");
    push(it->second.first, it->second.second);
  }

  void global(std::size_t at, const std::string& module, const std::string& name) {
    if (module != "torch.jit._pickle" || !name.starts_with("build_")) {
      fail(at, fmt::format("the global {}.{}: a dump holds plain data only", module, name));
    }
    push(Json("__build_list__"), 0);  // REDUCE then returns its argument's list
  }

  void reduce(std::size_t at) {
    int nesting = 0;
    Json args = pop(at, &nesting);
    Json fn = pop(at);
    if (fn != Json("__build_list__") || !args.is_array() || args.size() != 1) fail(at, "REDUCE of an unknown callable");
    push(std::move(args[0]), nesting - 1);
  }

  void tuple(std::size_t at, std::size_t n) {
    if (stack_.size() < n || (!marks_.empty() && stack_.size() - n < marks_.back())) fail(at, "stack underflow");
    Json t = Json::array();
    int nesting = 0;
    for (std::size_t i = stack_.size() - n; i < stack_.size(); ++i) {
      t.push_back(std::move(stack_[i]));
      nesting = std::max(nesting, nesting_[i]);
    }
    stack_.resize(stack_.size() - n);
    nesting_.resize(nesting_.size() - n);
    push(std::move(t), nesting + 1);
  }

  void from_mark(std::size_t at) {
    int nesting = 0;
    std::vector<Json> items = since_mark(at, nesting);
    push(Json(std::move(items)), nesting + 1);
  }

  void text(std::size_t n) { push(Json(std::string(take(n))), 0); }

  void step(unsigned char op, std::size_t at) {
    switch (op) {
      case 0x80: take(1); break;                        // PROTO
      case 0x95: take(8); break;                        // FRAME
      case '}': push(Json::object(), 1); break;         // EMPTY_DICT
      case ']': push(Json::array(), 1); break;          // EMPTY_LIST
      case ')': push(Json::array(), 1); break;          // EMPTY_TUPLE
      case '(': marks_.push_back(stack_.size()); break;   // MARK
      case 't': from_mark(at); break;                   // TUPLE
      case 'l': from_mark(at); break;                   // LIST
      case 0x85: tuple(at, 1); break;                   // TUPLE1
      case 0x86: tuple(at, 2); break;                   // TUPLE2
      case 0x87: tuple(at, 3); break;                   // TUPLE3
      case 'u': {                                       // SETITEMS
        int nesting = 0;
        std::vector<Json> items = since_mark(at, nesting);
        deepen(at, nesting);
        set_items(at, std::move(items));
        break;
      }
      case 's': {                                       // SETITEM
        int nv = 0, nk = 0;
        Json v = pop(at, &nv), k = pop(at, &nk);
        deepen(at, std::max(nv, nk));
        set_items(at, {std::move(k), std::move(v)});
        break;
      }
      case 'e': {                                       // APPENDS
        int nesting = 0;
        std::vector<Json> items = since_mark(at, nesting);
        deepen(at, nesting);
        append(at, std::move(items));
        break;
      }
      case 'a': {                                       // APPEND
        int nesting = 0;
        Json v = pop(at, &nesting);
        deepen(at, nesting);
        append(at, {std::move(v)});
        break;
      }
      case 'X': text(le(4)); break;                     // BINUNICODE
      case 0x8c: text(le(1)); break;                    // SHORT_BINUNICODE
      case 0x8d: text(le(8)); break;                    // BINUNICODE8
      case 'J': push(static_cast<std::int32_t>(static_cast<std::uint32_t>(le(4))), 0); break;  // BININT
      case 'K': push(le(1), 0); break;                  // BININT1
      case 'M': push(le(2), 0); break;                  // BININT2
      case 0x8a: long1(at); break;                      // LONG1
      case 'G': {                                       // BINFLOAT, big-endian
        const std::string_view s = take(8);
        std::uint64_t v = 0;
        for (char c : s) v = (v << 8) | static_cast<unsigned char>(c);
        push(std::bit_cast<double>(v), 0);
        break;
      }
      case 'N': push(nullptr, 0); break;                // NONE
      case 0x88: push(true, 0); break;                  // NEWTRUE
      case 0x89: push(false, 0); break;                 // NEWFALSE
      case 'q': memo_put(at, le(1)); break;             // BINPUT
      case 'r': memo_put(at, le(4)); break;             // LONG_BINPUT
      case 0x94: memo_put(at, memo_.size()); break;     // MEMOIZE
      case 'h': memo_get(at, le(1)); break;             // BINGET
      case 'j': memo_get(at, le(4)); break;             // LONG_BINGET
      case 'c': {                                       // GLOBAL
        const std::string module = line();
        global(at, module, line());
        break;
      }
      case 0x93: {                                      // STACK_GLOBAL
        Json name = pop(at), module = pop(at);
        if (!name.is_string() || !module.is_string()) fail(at, "STACK_GLOBAL of non-strings");
        global(at, module.get<std::string>(), name.get<std::string>());
        break;
      }
      case 'R': reduce(at); break;                      // REDUCE
      default: fail(at, fmt::format("opcode 0x{:02x} is not one a flight-recorder dump uses", op));
    }
  }

  // LONG1: a little-endian two's-complement integer of n bytes (n <= 8 here).
  void long1(std::size_t at) {
    const std::size_t n = le(1);
    if (n > 8) fail(at, "an integer wider than 64 bits");
    const std::uint64_t v = n == 0 ? 0 : le(n);
    const bool negative = n > 0 && (v >> (8 * n - 1)) & 1;
    if (n == 8 || !negative) {
      push(static_cast<std::int64_t>(v), 0);
    } else {
      push(static_cast<std::int64_t>(v | (~std::uint64_t{0} << (8 * n))), 0);
    }
  }

  std::string_view b_;
  std::size_t pos_ = 0;
  std::vector<Json> stack_;
  std::vector<int> nesting_;  // per stack slot: containers deep
  std::vector<std::size_t> marks_;
  std::map<std::uint64_t, std::pair<Json, int>> memo_;
  std::size_t copied_ = 0;
};

}  // namespace

Json unpickle(std::string_view bytes) { return Unpickler(bytes).run(); }

}  // namespace ddpsim::formats::detail
