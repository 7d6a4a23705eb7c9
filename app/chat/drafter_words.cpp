#include "drafter_words.h"

namespace medusa::chat {

const char* drafter_word(DrafterKind kind) {
    switch (kind) {
        case DrafterKind::Plain: return "plain";
        case DrafterKind::Medusa: return "Medusa";
        case DrafterKind::DraftModel: return "draft";
        case DrafterKind::Ngram: return "n-gram";
        case DrafterKind::Eagle: return "EAGLE";
        case DrafterKind::Auto: return "auto";
    }
    return "";
}

}  // namespace medusa::chat
