#include "train/seed_prompts.h"

namespace medusa::train {

const std::vector<std::string>& seed_prompts() {
    static const std::vector<std::string> p = {
        "Once upon a time",
        "One day, a little girl named",
        "There was a big dog who",
        "Tom and his mom went to the park.",
        "The sun was shining and the birds",
        "Lily wanted to play with her friend",
        "In a small house near the forest",
        "The boy looked at the sky and said,",
        "\"Can I have a cookie?\" asked",
        "Once there was a kind old man who",
        "Sara found a shiny red ball",
        "The cat was sad because",
        "It was a rainy day and",
        "Max had a toy car. He",
        "Mom said, \"Let's bake a cake",
        "Ben was scared of the dark, so",
        "A little bird lived in a tree",
        "The princess opened the door and saw",
        "Every morning, Anna liked to",
        "The fish swam in the blue water",
        "Tim and Sue were best friends.",
        "At school, the teacher told the kids",
        "The little bunny hopped to the garden",
        "Grandma gave Jack a big hug and",
        "Here is a story about a brave knight.",
        "Why is the sky blue? Because",
        "First, take the red block. Then",
        "The dragon was very hungry.",
        "Bob the frog liked to jump",
        "Once upon a time, in a land far away,",
        "The moral of the story is",
        "Amy saw a butterfly and",
    };
    return p;
}

}  // namespace medusa::train
