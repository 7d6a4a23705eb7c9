#include "model/torch_pickle.h"

#include <cstring>
#include <deque>
#include <memory>
#include <set>

#include "model/file_bytes.h"
#include "model/format_error.h"

namespace medusa {

namespace {

// The values a state dict's pickle builds. They live in the machine's arena and refer to each other
// by pointer: the memo and the stack share lists and dicts while SETITEMS fills them, and a pickle
// that makes a container hold itself builds a cycle that costs nothing to free. Small (72 bytes),
// since a pickle's every opcode may make one.
struct Node;
using Ref = Node*;
struct Node {
    enum Kind : uint8_t { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor, Mark } kind = None;
    bool collected = false;  // Dict: already walked by collect()
    int64_t i = 0;           // Bool, Int; Float: its bits (never read); Tensor: its index in the machine's tensors
    std::string s;           // String; Global "module.name"
    std::vector<Ref> items;  // Tuple, List; Dict: key, value, key, value... in insertion order;
                             // Storage: its class (a Global) and its key (a String)
};
static_assert(sizeof(Node) <= 72, "a Node per opcode: kMaxOps below assumes 72 bytes");

// The callables and classes a state dict may name; anything else is refused.
const std::set<std::string>& allowed_globals() {
    static const std::set<std::string> g = {
        "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
        "torch.FloatStorage", "torch.HalfStorage", "torch.BFloat16Storage", "torch.DoubleStorage",
        "torch.LongStorage", "torch.IntStorage", "torch.ShortStorage", "torch.CharStorage", "torch.ByteStorage",
        "torch.BoolStorage"};
    return g;
}

// What bounds the machine's memory, beyond copies of the pickle's own strings (at most its size):
// each of at most kMaxOps opcodes adds at most one Node and one pointer (on the stack, in the memo
// or in a container), about 90 bytes with the vectors' slack: 24 MB; each of at most kMaxTensors
// tensors about 300 bytes, and its name at most kMaxName: 21 MB. Medusa's heads pickle in a few
// hundred opcodes, a Llama-70B state dict in about 22,000 (723 tensors).
constexpr size_t kMaxOps = size_t(1) << 18;
constexpr size_t kMaxTensors = size_t(1) << 14;
constexpr size_t kMaxName = 1024;        // a tensor's name, its dicts' keys joined by "."
constexpr size_t kMaxStorageKey = 64;    // torch.save numbers its storages: "0", "1", ...
constexpr size_t kMaxString = size_t(1) << 20;

class Machine {
public:
    Machine(const uint8_t* data, size_t size, std::string name) : r_(data, size, name), name_(std::move(name)) {}

    Ref make(Node::Kind k) {
        if (arena_.size() >= kMaxOps) bad("the pickle builds absurdly many values");
        arena_.emplace_back();
        arena_.back().kind = k;
        return &arena_.back();
    }

    Ref run() {
        for (;;) {
            const uint8_t op = r_.read<uint8_t>("pickle opcode");
            if (++ops_ > kMaxOps)
                bad("the pickle runs more than " + std::to_string(kMaxOps) + " opcodes, more than any state dict needs");
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
                case 'q': put(r_.read<uint8_t>("memo index")); break;               // BINPUT
                case 'r': put(r_.read<uint32_t>("memo index")); break;              // LONG_BINPUT
                case 0x94: put(memo_entries_); break;                               // MEMOIZE
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
                    Ref dict = target(Node::Dict);
                    dict->items.push_back(k);
                    dict->items.push_back(v);
                    break;
                }
                case 'u': {                                                         // SETITEMS
                    auto items = pop_to_mark();
                    if (items.size() % 2) bad("SETITEMS with an odd number of items");
                    Ref dict = target(Node::Dict);
                    dict->items.insert(dict->items.end(), items.begin(), items.end());
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

    void push(Ref v) { stack_.push_back(v); }  // at most one per opcode
    void push_int(Node::Kind k, int64_t v) {
        Ref n = make(k);
        n->i = v;
        push(n);
    }
    void push_float() {
        uint64_t bits = 0;  // big-endian
        for (int k = 0; k < 8; ++k) bits = (bits << 8) | r_.read<uint8_t>("float");
        Ref n = make(Node::Float);
        std::memcpy(&n->i, &bits, 8);
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
    // The memo: picklers number its entries from 0, so a vector holds it; an index past every
    // opcode the machine may run cannot be one pickle's. MEMOIZE stores at the count of entries.
    void put(size_t i) {
        if (i >= kMaxOps) bad("memo index " + std::to_string(i) + " is beyond any state dict's");
        if (i >= memo_.size()) memo_.resize(i + 1, nullptr);
        if (!memo_[i]) ++memo_entries_;
        memo_[i] = top();
    }
    Ref memo(uint32_t i) {
        if (i >= memo_.size() || !memo_[i]) bad("memo entry " + std::to_string(i) + " was never stored");
        return memo_[i];
    }

    // ('storage', <storage class>, key, location, numel)
    Ref persistent(const Ref& pid) {
        const auto& p = pid->items;
        if (p.size() < 3 || p[0]->kind != Node::String || p[0]->s != "storage" || p[1]->kind != Node::Global ||
            p[2]->kind != Node::String)
            bad("a persistent id that is not a tensor storage");
        if (p[1]->s.find("Storage") == std::string::npos) bad("'" + p[1]->s + "' is not a storage class");
        if (p[2]->s.size() > kMaxStorageKey) bad("a storage key of " + std::to_string(p[2]->s.size()) + " bytes");
        Ref s = make(Node::Storage);
        s->items = {p[1], p[2]};
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
            if (tensors_.size() >= kMaxTensors)
                bad("the pickle builds more than " + std::to_string(kMaxTensors) + " tensors, more than any state dict of heads");
            TorchTensorRef ref;
            const std::string& storage_class = a[0]->items[0]->s;
            ref.storage_type = storage_class.substr(storage_class.rfind('.') + 1);
            ref.storage_key = a[0]->items[1]->s;
            ref.offset = a[1]->i;
            ref.shape = ints(a[2], "size");
            ref.stride = ints(a[3], "stride");
            if (ref.offset < 0 || ref.shape.size() != ref.stride.size()) bad("tensor with a bad layout");
            Ref t = make(Node::Tensor);
            t->i = int64_t(tensors_.size());
            tensors_.push_back(std::move(ref));
            return t;
        }
        if (fn == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, hooks)
            if (a.empty() || a[0]->kind != Node::Tensor) bad("_rebuild_parameter without a tensor");
            return a[0];
        }
        bad("'" + fn + "' cannot be called");
    }

public:
    const TorchTensorRef& tensor(const Node& t) const { return tensors_[size_t(t.i)]; }

private:
    ByteReader r_;
    std::string name_;
    std::deque<Node> arena_;  // owns every value; a deque never moves them
    std::vector<TorchTensorRef> tensors_;
    std::vector<Ref> stack_;
    std::vector<Ref> memo_;
    size_t memo_entries_ = 0;
    size_t ops_ = 0;
};

// Walks the dicts below `dict`, each once: a state dict holds every dict in one place, while a
// pickle may share one dict among many keys (8 keys to the same dict, 9 dicts deep, would be
// walked as 8^8 tensors from a kilobyte) or make one hold itself.
void collect(const Machine& machine, Node& dict, const std::string& prefix, std::map<std::string, TorchTensorRef>& out,
             int depth, const std::string& name) {
    if (depth > 8) throw FormatError(name + ": dicts nested too deep");
    if (dict.collected)
        throw FormatError(name + ": the dict '" + prefix + "' is reached a second time (shared or holding itself), which no state dict does: refused");
    dict.collected = true;
    for (size_t e = 0; e + 1 < dict.items.size(); e += 2) {
        const Node &k = *dict.items[e], &value = *dict.items[e + 1];
        if (k.kind != Node::String || (value.kind != Node::Tensor && value.kind != Node::Dict)) continue;
        if (prefix.size() + 1 + k.s.size() > kMaxName)
            throw FormatError(name + ": a tensor name longer than " + std::to_string(kMaxName) + " bytes");
        const std::string key = prefix.empty() ? k.s : prefix + "." + k.s;
        if (value.kind == Node::Tensor) out[key] = machine.tensor(value);
        else collect(machine, *dict.items[e + 1], key, out, depth + 1, name);
    }
}

}  // namespace

std::map<std::string, TorchTensorRef> read_torch_state_dict(const uint8_t* data, size_t size, const std::string& name) {
    Machine machine(data, size, name);
    const Ref root = machine.run();
    if (root->kind != Node::Dict) throw FormatError(name + ": the pickle holds no dict of tensors (not a state dict)");
    std::map<std::string, TorchTensorRef> out;
    collect(machine, *root, "", out, 0, name);
    return out;
}

}  // namespace medusa
