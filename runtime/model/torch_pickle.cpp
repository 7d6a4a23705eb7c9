#include "model/torch_pickle.h"

#include <cstring>
#include <deque>
#include <memory>
#include <set>

#include "model/file_bytes.h"
#include "model/model_file.h"

namespace medusa {

namespace {

// The values a state dict's pickle builds. They live in the machine's arena and refer to each other
// by pointer: the memo and the stack share lists and dicts while SETITEMS fills them, and a pickle
// that makes a container hold itself builds a cycle that costs nothing to free.
struct Node;
using Ref = Node*;
struct Node {
    enum Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor, Mark } kind = None;
    int64_t i = 0;
    double f = 0;
    std::string s;                               // String; Global "module.name"; Storage key
    std::vector<Ref> items;                      // Tuple, List
    std::vector<std::pair<Ref, Ref>> entries;    // Dict, in insertion order
    TorchTensorRef tensor;                       // Tensor; Storage: storage_type
};

// The callables and classes a state dict may name; anything else is refused.
const std::set<std::string>& allowed_globals() {
    static const std::set<std::string> g = {
        "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
        "torch.FloatStorage", "torch.HalfStorage", "torch.BFloat16Storage", "torch.DoubleStorage",
        "torch.LongStorage", "torch.IntStorage", "torch.ShortStorage", "torch.CharStorage", "torch.ByteStorage",
        "torch.BoolStorage"};
    return g;
}

constexpr size_t kMaxNodes = 1u << 22;  // far more than any state dict pickles
constexpr size_t kMaxString = 1u << 20;

class Machine {
public:
    Machine(const uint8_t* data, size_t size, std::string name) : r_(data, size, name), name_(std::move(name)) {}

    Ref make(Node::Kind k) {
        if (arena_.size() >= kMaxNodes) bad("the pickle builds absurdly many values");
        arena_.emplace_back();
        arena_.back().kind = k;
        return &arena_.back();
    }

    Ref run() {
        for (;;) {
            const uint8_t op = r_.read<uint8_t>("pickle opcode");
            if (++ops_ > kMaxNodes) bad("the pickle is absurdly long");
            switch (op) {
                case 0x80: r_.read<uint8_t>("protocol"); break;                     // PROTO
                case 0x95: r_.read<uint64_t>("frame length"); break;                // FRAME
                case '}': push(make(Node::Dict)); break;                            // EMPTY_DICT
                case ']': push(make(Node::List)); break;                            // EMPTY_LIST
                case ')': push(make(Node::Tuple)); break;                           // EMPTY_TUPLE
                case '(': push(make(Node::Mark)); break;                            // MARK
                case 'N': push(make(Node::None)); break;                            // NONE
                case 0x88: case 0x89: push_int(Node::Bool, op == 0x88); break;      // NEWTRUE, NEWFALSE
                case 'J': push_int(Node::Int, r_.read<int32_t>("int")); break;      // BININT
                case 'K': push_int(Node::Int, r_.read<uint8_t>("int")); break;      // BININT1
                case 'M': push_int(Node::Int, r_.read<uint16_t>("int")); break;     // BININT2
                case 0x8a: push_int(Node::Int, read_long1()); break;                // LONG1
                case 'G': push_float(); break;                                      // BINFLOAT
                case 'X': push_string(r_.read<uint32_t>("string length")); break;   // BINUNICODE
                case 0x8c: push_string(r_.read<uint8_t>("string length")); break;   // SHORT_BINUNICODE
                case 'c': {                                                         // GLOBAL
                    const std::string module = read_line();
                    push_global(module + "." + read_line());
                    break;
                }
                case 0x93: {                                                        // STACK_GLOBAL
                    const Ref n = pop(Node::String), m = pop(Node::String);
                    push_global(m->s + "." + n->s);
                    break;
                }
                case 'q': memo_[r_.read<uint8_t>("memo index")] = top(); break;    // BINPUT
                case 'r': memo_[r_.read<uint32_t>("memo index")] = top(); break;   // LONG_BINPUT
                case 0x94: memo_[uint32_t(memo_.size())] = top(); break;           // MEMOIZE
                case 'h': push(memo(r_.read<uint8_t>("memo index"))); break;        // BINGET
                case 'j': push(memo(r_.read<uint32_t>("memo index"))); break;       // LONG_BINGET
                case 't': push_tuple(pop_to_mark()); break;                         // TUPLE
                case 0x85: case 0x86: case 0x87: {                                  // TUPLE1..3
                    std::vector<Ref> items(size_t(op - 0x84));
                    for (size_t k = items.size(); k-- > 0;) items[k] = pop();
                    push_tuple(std::move(items));
                    break;
                }
                case 'a': {                                                         // APPEND
                    Ref v = pop();
                    target(Node::List)->items.push_back(v);
                    break;
                }
                case 'e': {                                                         // APPENDS
                    auto items = pop_to_mark();
                    Ref list = target(Node::List);
                    list->items.insert(list->items.end(), items.begin(), items.end());
                    break;
                }
                case 's': {                                                         // SETITEM
                    Ref v = pop(), k = pop();
                    target(Node::Dict)->entries.emplace_back(k, v);
                    break;
                }
                case 'u': {                                                         // SETITEMS
                    auto items = pop_to_mark();
                    if (items.size() % 2) bad("SETITEMS with an odd number of items");
                    Ref dict = target(Node::Dict);
                    for (size_t k = 0; k < items.size(); k += 2) dict->entries.emplace_back(items[k], items[k + 1]);
                    break;
                }
                case 'Q': push(persistent(pop(Node::Tuple))); break;               // BINPERSID
                case 'R': {                                                         // REDUCE
                    Ref args = pop(Node::Tuple), fn = pop(Node::Global);
                    push(reduce(fn->s, *args));
                    break;
                }
                case 'b': {                                                         // BUILD
                    pop();  // the state: an OrderedDict's _metadata, which says nothing about tensors
                    if (top()->kind != Node::Dict) bad("BUILD on something other than a dict");
                    break;
                }
                case '.': {                                                         // STOP
                    Ref result = pop();
                    return result;
                }
                default: {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "0x%02x", op);
                    bad(std::string("pickle opcode ") + hex + (op >= 0x20 && op < 0x7f ? std::string(" ('") + char(op) + "')" : "") +
                        " at offset " + std::to_string(r_.pos() - 1) + " is not one a state dict needs: refused");
                }
            }
        }
    }

private:
    [[noreturn]] void bad(const std::string& what) const { throw FormatError(name_ + ": " + what); }

    void push(Ref v) {
        if (stack_.size() > kMaxNodes) bad("pickle stack overflow");
        stack_.push_back(std::move(v));
    }
    void push_int(Node::Kind k, int64_t v) {
        Ref n = make(k);
        n->i = v;
        push(n);
    }
    void push_float() {
        uint64_t bits = 0;  // big-endian
        for (int k = 0; k < 8; ++k) bits = (bits << 8) | r_.read<uint8_t>("float");
        Ref n = make(Node::Float);
        std::memcpy(&n->f, &bits, 8);
        push(n);
    }
    void push_string(uint64_t length) {
        if (length > kMaxString) bad("pickle string of " + std::to_string(length) + " bytes");
        Ref n = make(Node::String);
        n->s = r_.read_string(length, "pickle string");
        push(n);
    }
    void push_tuple(std::vector<Ref> items) {
        Ref t = make(Node::Tuple);
        t->items = std::move(items);
        push(t);
    }
    void push_global(const std::string& qualified) {
        if (!allowed_globals().count(qualified))
            bad("the pickle names '" + qualified + "', which a state dict of tensors never needs: refused");
        Ref g = make(Node::Global);
        g->s = qualified;
        push(g);
    }
    std::string read_line() {
        std::string s;
        for (char c; (c = char(r_.read<uint8_t>("global name"))) != '\n';) {
            if (s.size() > 256) bad("overlong global name");
            s += c;
        }
        return s;
    }
    int64_t read_long1() {
        const uint8_t n = r_.read<uint8_t>("long length");
        if (n > 8) bad("integer of " + std::to_string(n) + " bytes");
        uint64_t v = 0;
        for (int k = 0; k < n; ++k) v |= uint64_t(r_.read<uint8_t>("long")) << (8 * k);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign
        return int64_t(v);
    }
    Ref top() {
        if (stack_.empty()) bad("pickle stack underflow");
        return stack_.back();
    }
    Ref pop() {
        Ref v = top();
        stack_.pop_back();
        if (v->kind == Node::Mark) bad("a MARK where a value belongs");
        return v;
    }
    Ref pop(Node::Kind k) {
        Ref v = pop();
        if (v->kind != k) bad("unexpected value type in the pickle");
        return v;
    }
    Ref target(Node::Kind k) {
        Ref v = top();
        if (v->kind != k) bad("appending to something that is not a " + std::string(k == Node::List ? "list" : "dict"));
        return v;
    }
    std::vector<Ref> pop_to_mark() {
        std::vector<Ref> items;
        for (;;) {
            Ref v = top();
            stack_.pop_back();
            if (v->kind == Node::Mark) break;
            items.push_back(v);
        }
        return {items.rbegin(), items.rend()};
    }
    Ref memo(uint32_t i) {
        const auto it = memo_.find(i);
        if (it == memo_.end()) bad("memo entry " + std::to_string(i) + " was never stored");
        return it->second;
    }

    // ('storage', <storage class>, key, location, numel)
    Ref persistent(const Ref& pid) {
        const auto& p = pid->items;
        if (p.size() < 3 || p[0]->kind != Node::String || p[0]->s != "storage" || p[1]->kind != Node::Global ||
            p[2]->kind != Node::String)
            bad("a persistent id that is not a tensor storage");
        Ref s = make(Node::Storage);
        s->s = p[2]->s;
        s->tensor.storage_type = p[1]->s.substr(p[1]->s.rfind('.') + 1);
        if (s->tensor.storage_type.find("Storage") == std::string::npos) bad("'" + p[1]->s + "' is not a storage class");
        return s;
    }

    std::vector<int64_t> ints(const Ref& t, const char* what) {
        if (t->kind != Node::Tuple || t->items.size() > 8) bad(std::string("tensor ") + what + " is not a short tuple");
        std::vector<int64_t> v;
        for (const Ref& x : t->items) {
            if (x->kind != Node::Int || x->i < 0 || x->i > (int64_t(1) << 40)) bad(std::string("tensor ") + what + " out of range");
            v.push_back(x->i);
        }
        return v;
    }

    Ref reduce(const std::string& fn, const Node& args) {
        const auto& a = args.items;
        if (fn == "collections.OrderedDict") {
            if (!a.empty()) bad("OrderedDict built from arguments");
            return make(Node::Dict);
        }
        if (fn == "torch._utils._rebuild_tensor_v2") {  // (storage, offset, size, stride, requires_grad, hooks[, metadata])
            if (a.size() < 4 || a[0]->kind != Node::Storage || a[1]->kind != Node::Int)
                bad("_rebuild_tensor_v2 with unexpected arguments");
            Ref t = make(Node::Tensor);
            t->tensor = a[0]->tensor;
            t->tensor.storage_key = a[0]->s;
            t->tensor.offset = a[1]->i;
            t->tensor.shape = ints(a[2], "size");
            t->tensor.stride = ints(a[3], "stride");
            if (t->tensor.offset < 0 || t->tensor.shape.size() != t->tensor.stride.size()) bad("tensor with a bad layout");
            return t;
        }
        if (fn == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, hooks)
            if (a.empty() || a[0]->kind != Node::Tensor) bad("_rebuild_parameter without a tensor");
            return a[0];
        }
        bad("'" + fn + "' cannot be called");
    }

    ByteReader r_;
    std::string name_;
    std::deque<Node> arena_;  // owns every value; a deque never moves them
    std::vector<Ref> stack_;
    std::map<uint32_t, Ref> memo_;
    size_t ops_ = 0;
};

void collect(const Ref& v, const std::string& prefix, std::map<std::string, TorchTensorRef>& out, int depth,
             const std::string& name) {
    if (depth > 8) throw FormatError(name + ": dicts nested too deep");
    for (const auto& [k, value] : v->entries) {
        if (k->kind != Node::String) continue;
        const std::string key = prefix.empty() ? k->s : prefix + "." + k->s;
        if (value->kind == Node::Tensor) out[key] = value->tensor;
        else if (value->kind == Node::Dict) collect(value, key, out, depth + 1, name);
    }
}

}  // namespace

std::map<std::string, TorchTensorRef> read_torch_state_dict(const uint8_t* data, size_t size, const std::string& name) {
    Machine machine(data, size, name);
    const Ref root = machine.run();
    if (root->kind != Node::Dict) throw FormatError(name + ": the pickle holds no dict of tensors (not a state dict)");
    std::map<std::string, TorchTensorRef> out;
    collect(root, "", out, 0, name);
    return out;
}

}  // namespace medusa
