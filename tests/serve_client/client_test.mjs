// OpenAI's official Node client (the `openai` package pinned in package.json) against a running
// medusa serve: a completion, a stream (with its usage asked for), the model by its id, a chat completion (whole and streamed), an
// agent's conversation (tool calls and results, a late system message, a prefill) with n and logprobs, 8 requests at once, and the
// client's typed errors for a bad request, an unsupported response_format and a wrong key.
//   usage: node client_test.mjs BASE_URL API_KEY EXPECTED_TEXT
// EXPECTED_TEXT: what `medusa generate` prints after "Once upon a time" with the server's flags
// and -n 24.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const [baseURL, apiKey, expected] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
const model = 'stories260K.bin';
const ask = { model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0 };

const completion = await client.completions.create(ask);
assert.equal(completion.object, 'text_completion');
assert.equal(completion.choices[0].text, expected);
assert.equal(completion.usage.completion_tokens + completion.usage.prompt_tokens, completion.usage.total_tokens);
assert.ok(completion.speculative.drafter.startsWith('n-gram'), completion.speculative.drafter);

let streamed = '';
let chunks = 0;
for await (const chunk of await client.completions.create({ ...ask, stream: true })) {
  streamed += chunk.choices[0]?.text ?? '';
  chunks += 1;
}
assert.equal(streamed, expected);
assert.ok(chunks > 2, `${chunks} chunks`);

// Usage asked for in a stream: a last chunk of its own, with no choices; and the model by its id.
let streamUsage = null;
for await (const chunk of await client.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } })) {
  if (chunk.usage) {
    assert.deepEqual(chunk.choices, []);
    streamUsage = chunk.usage;
  }
}
assert.deepEqual(streamUsage, completion.usage);
assert.equal((await client.models.retrieve(model)).id, model);

const messages = [{ role: 'user', content: 'Tell me a story' }];
const chat = await client.chat.completions.create({ model, messages, max_tokens: 30, temperature: 0 });
assert.equal(chat.object, 'chat.completion');
assert.equal(chat.choices[0].message.role, 'assistant');
assert.ok(chat.choices[0].message.content.length > 0);
assert.ok(['stop', 'length'].includes(chat.choices[0].finish_reason));
let chatStreamed = '';
for await (const chunk of await client.chat.completions.create({ model, messages, max_tokens: 30, temperature: 0, stream: true }))
  chatStreamed += chunk.choices[0]?.delta?.content ?? '';
assert.equal(chatStreamed, chat.choices[0].message.content);

// What agents and front-ends send: tool calls and their results, a system message late, a
// prefill; two choices with log-probabilities, through the client's own types.
const agent = await client.chat.completions.create({
  model,
  max_tokens: 8,
  temperature: 0,
  n: 2,
  logprobs: true,
  top_logprobs: 2,
  messages: [
    { role: 'system', content: 'Tell stories.' },
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '-3 C' },
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'And a story?' },
    { role: 'assistant', content: 'Once' },
  ],
});
assert.equal(agent.choices.length, 2);
assert.equal(agent.choices[1].message.content, agent.choices[0].message.content);
const tokens = agent.choices[0].logprobs.content;
assert.ok(tokens.length > 0);
assert.equal(tokens.map((t) => t.token).join(''), agent.choices[0].message.content);
tokens.forEach((t) => assert.equal(t.top_logprobs.length, 2));
await assert.rejects(client.chat.completions.create({ model, messages, response_format: { type: 'json_object' } }), (e) => {
  assert.ok(e instanceof OpenAI.BadRequestError, String(e));
  assert.equal(e.param, 'response_format');
  return true;
});

// 8 at once, half of them streamed: the server holds 8, decodes them in turn, and each gets its
// own text, the same at temperature 0.
const texts = await Promise.all(
  Array.from({ length: 8 }, async (_, i) => {
    if (i % 2 === 0) return (await client.completions.create(ask)).choices[0].text;
    let text = '';
    for await (const chunk of await client.completions.create({ ...ask, stream: true })) text += chunk.choices[0]?.text ?? '';
    return text;
  }),
);
texts.forEach((text) => assert.equal(text, expected));

await assert.rejects(client.completions.create({ ...ask, temperature: 5 }), (e) => {
  assert.ok(e instanceof OpenAI.BadRequestError, String(e));
  assert.equal(e.status, 400);
  assert.equal(e.code, 'invalid_type');
  assert.equal(e.param, 'temperature');
  return true;
});
const stranger = new OpenAI({ baseURL, apiKey: 'not-the-key', maxRetries: 0 });
await assert.rejects(stranger.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
const models = await client.models.list();
assert.deepEqual(models.data.map((m) => m.id), [model]);
console.log("completion, stream, chat, tools, prefill, n, logprobs, 8 at once and errors as expected");
