// Milliseconds from sending a streamed completion request to its first text event, as a client
// sees it (the response's headers come before it, so curl's time to the first byte is too early).
//   usage: node scripts/first_token_ms.mjs URL JSON_BODY
const [url, body] = process.argv.slice(2);
// A first request loads and warms Node's HTTP client, which would otherwise count tens of ms.
await (await fetch(new URL('/health', url))).text();
const start = performance.now();
const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
const reader = res.body.getReader();
const decoder = new TextDecoder();
let seen = '';
for (;;) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`the stream ended without text: ${seen}`);
  seen += decoder.decode(value, { stream: true });
  if (seen.includes('"text"')) break;
}
console.log((performance.now() - start).toFixed(2));
await reader.cancel();
