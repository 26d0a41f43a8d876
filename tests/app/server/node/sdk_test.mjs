// Run by server_sdk_test against `hearth-cli serve`: the official OpenAI SDK
// lists the models, streams a chat completion and meets a wrong key. Prints
// one JSON line with what it saw; the C++ test checks it against the engine.
import OpenAI from 'openai';

const baseURL = process.env.HEARTH_BASE_URL;
const apiKey = process.env.HEARTH_API_KEY;
const message = process.env.HEARTH_MESSAGE;
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });

const out = { models: [], text: '', chunks: 0, finish_reason: null, usage: null, bad_key_status: null };
const models = await client.models.list();
for await (const m of models) out.models.push(m.id);

const stream = await client.chat.completions.create({
  model: out.models[0],
  messages: [{ role: 'user', content: message }],
  max_tokens: 40,
  temperature: 0,
  stream: true,
  stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  out.chunks += 1;
  if (chunk.usage) out.usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  if (choice.delta?.content) out.text += choice.delta.content;
  if (choice.finish_reason) out.finish_reason = choice.finish_reason;
}

try {
  await new OpenAI({ baseURL, apiKey: 'wrong-key', maxRetries: 0 }).models.list();
} catch (e) {
  out.bad_key_status = e.status ?? String(e);
}
console.log(JSON.stringify(out));
