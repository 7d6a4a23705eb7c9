#!/usr/bin/env python3
"""Renders the conversations of tests/data/chat_shapes/conversations.json through the families'
own Jinja chat templates (tests/data/chat_templates) with jinja2, set up as transformers sets it up
for apply_chat_template, and writes what each template gives to tests/data/chat_shapes/expected.json:
the independent oracle of runtime/model/chat_render.cpp for every order of roles.

What the engine adds of its own is redone here in Python from its documented rules, before the
template sees the messages:
- tools offered (a case's "tools") go into the system message as Qwen3's template puts them, for
  every format; the tools' JSON as json.dumps writes it is stored beside the prompts ("_tools");
- formats without tools (Gemma, Phi) get an assistant's calls as <tool_call> blocks after its text
  and each tool result as a user message holding a <tool_response> block;
- Gemma's turns must alternate: the leading system messages joined, a later one the user's,
  neighbours of one role joined by a blank line, an empty user turn before an assistant's first
  message, and one after a conversation of system messages only;
- a last assistant message is a prefill: rendered without the generation prompt and cut after its
  text stripped, as transformers' continue_final_message does.
The leading BOS a template writes is left out (the engine's prompts hold it apart).

    python3 scripts/make_chat_shape_fixtures.py
"""
import json
import pathlib

import jinja2
import jinja2.ext
import jinja2.sandbox

root = pathlib.Path(__file__).resolve().parent.parent
templates = root / "tests/data/chat_templates"
shapes = root / "tests/data/chat_shapes"

# Engine template name -> (jinja file, bos_token, eos_token, writes tools, alternates)
FAMILIES = {
    "qwen3": ("qwen3.jinja", "", "<|im_end|>", True, False),
    "chatml": ("qwen2.5.jinja", "", "<|im_end|>", True, False),
    "gemma": ("gemma3.jinja", "<bos>", "<eos>", False, True),
    "phi3": ("phi3.5-mini.jinja", "<s>", "<|endoftext|>", False, False),
    "phi4": ("phi4-mini.jinja", "<|endoftext|>", "<|endoftext|>", False, False),
}


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def environment():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, indent=None, separators=None, sort_keys=False: json.dumps(
        x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
    env.globals["raise_exception"] = raise_exception
    return env


def call_blocks(message):
    out = message.get("content") or ""
    for call in message.get("tool_calls", []):
        if out:
            out += "\n"
        out += '<tool_call>\n{"name": "%s", "arguments": %s}\n</tool_call>' % (
            call["function"]["name"], call["function"]["arguments"] or "{}")
    return out


def tools_block(tools):
    text = ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
    for tool in tools:
        text += "\n" + json.dumps(tool, ensure_ascii=False)
    return text + ("\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                   "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
                   "\"arguments\": <args-json-object>}\n</tool_call>")


def with_tools(messages, tools):
    if not tools:
        return messages
    messages = [dict(m) for m in messages]
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = (messages[0].get("content") or "") + "\n\n" + tools_block(tools)
    else:
        messages.insert(0, {"role": "system", "content": tools_block(tools)})
    return messages


def tools_as_text(messages):
    out = []
    for m in messages:
        if m["role"] == "tool":
            out.append({"role": "user", "content": "<tool_response>\n" + m["content"] + "\n</tool_response>"})
        elif m.get("tool_calls"):
            out.append({"role": m["role"], "content": call_blocks(m)})
        else:
            out.append({"role": m["role"], "content": m.get("content") or ""})
    return out


def alternated(messages):
    out = []
    for m in messages:
        m = dict(m)
        if m["role"] == "system" and out and out[-1]["role"] != "system":
            m["role"] = "user"
        if out and out[-1]["role"] == m["role"]:
            a, b = out[-1]["content"], m["content"]
            out[-1]["content"] = a + ("\n\n" if a and b else "") + b
            continue
        if m["role"] == "assistant" and (not out or out[-1]["role"] == "system"):
            out.append({"role": "user", "content": ""})
        out.append(m)
    if not out or out[-1]["role"] == "system":
        out.append({"role": "user", "content": ""})
    return out


def for_template(messages, dict_arguments):
    """OpenAI's messages as a template reads them: Qwen2.5's applies tojson to the arguments, so
    it is given them parsed, as transformers expects; Qwen3's writes a string as it is."""
    out = []
    for m in messages:
        m = json.loads(json.dumps(m))
        if m.get("content") is None:
            m["content"] = ""
        for call in m.get("tool_calls", []):
            if dict_arguments:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"] or "{}")
        out.append(m)
    return out


def render(family, messages, tools=None):
    """The prompt, or None where the template adds what the engine's format does not: Qwen2.5's
    writes a system message of its own (\"You are Qwen...\") when none comes first, which ChatML
    in general does not."""
    file, bos, eos, writes_tools, alternates = FAMILIES[family]
    if family == "chatml" and messages[0]["role"] != "system":
        return None
    template = environment().from_string((templates / file).read_text())
    if not writes_tools:
        messages = tools_as_text(with_tools(messages, tools))
    if alternates:
        messages = alternated(messages)
    prefill = messages[-1]["role"] == "assistant"
    text = template.render(messages=for_template(messages, family == "chatml"), add_generation_prompt=not prefill,
                           bos_token=bos, eos_token=eos, tools=(tools or None) if writes_tools else None)
    if prefill:
        final = call_blocks(messages[-1]).strip()
        text = text[: text.rindex(final) + len(final)]
    if bos and text.startswith(bos):
        text = text[len(bos):]
    return text


def main():
    cases = json.loads((shapes / "conversations.json").read_text())
    expected = {}
    for case in cases:
        tools = case.get("tools")
        expected[case["name"]] = {family: render(family, case["messages"], tools) for family in FAMILIES}
        if tools:
            expected[case["name"]]["_tools"] = [json.dumps(t, ensure_ascii=False) for t in tools]
    (shapes / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} conversations through {len(FAMILIES)} templates")


if __name__ == "__main__":
    main()
