// The OpenAI Node SDK (npm package `openai`, pinned in package-lock.json) as a real client of
// `verdict serve` on the demo models: chat completions (plain and streamed), completions, the model list
// and the errors the SDK maps to its exception classes.
//
// Run by ctest (node.openai_sdk) through tests/examples/serve_demo.py, which starts the server with
// --api-key and sets VERDICT_BASE_URL and VERDICT_API_KEY. By hand: `npm ci` here, then
//   VERDICT_BASE_URL=http://127.0.0.1:8000 VERDICT_API_KEY=KEY node --test openai_sdk.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';

let OpenAI;
try {
  ({ default: OpenAI } = await import('openai'));
} catch (e) {
  throw new Error(`cannot load the openai package (${e.message}): run \`npm ci\` in tests/node (scripts/test.sh does)`);
}

const baseURL = process.env.VERDICT_BASE_URL;
const apiKey = process.env.VERDICT_API_KEY;
if (!baseURL || !apiKey) throw new Error('set VERDICT_BASE_URL and VERDICT_API_KEY (serve_demo.py does)');

const CHAT = 'qwen-demo';
const DECISION = 'clef-demo';
const client = new OpenAI({ apiKey, baseURL: `${baseURL}/v1`, maxRetries: 0, timeout: 600_000 });

const messages = [
  { role: 'system', content: 'You are a helpful assistant. Answer briefly.' },
  { role: 'user', content: 'Write one sentence about the sea.' },
];
// Greedy, so that the plain and the streamed answers are the same tokens. Thinking off (a field the SDK
// passes through, as vLLM and verdict take it): the answer goes to `content`, not `reasoning_content`.
const greedy = {
  model: CHAT, messages, max_tokens: 12, temperature: 0, seed: 11, chat_template_kwargs: { enable_thinking: false },
};

function assertUsage(usage, maxTokens) {
  for (const key of ['prompt_tokens', 'completion_tokens', 'total_tokens']) {
    assert.ok(Number.isInteger(usage[key]), `usage.${key} is ${usage[key]}`);
  }
  assert.ok(usage.prompt_tokens > 0);
  assert.ok(usage.completion_tokens >= 0 && usage.completion_tokens <= maxTokens, JSON.stringify(usage));
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
}

function assertFinish(finishReason, usage, maxTokens) {
  assert.ok(['stop', 'length'].includes(finishReason), `finish_reason ${finishReason}`);
  if (finishReason === 'length') assert.equal(usage.completion_tokens, maxTokens);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('the request succeeded');
}

test('models.list() lists the demo decision and chat models', async () => {
  const ids = [];
  for await (const model of client.models.list()) {
    assert.equal(model.object, 'model');
    assert.equal(typeof model.created, 'number');
    assert.equal(typeof model.owned_by, 'string');
    ids.push(model.id);
  }
  assert.ok(ids.includes(DECISION), ids.join(', '));
  assert.ok(ids.includes(CHAT), ids.join(', '));
  const chat = await client.models.retrieve(CHAT);
  assert.equal(chat.id, CHAT);
  assert.equal(chat.object, 'model');
});

test('chat.completions.create: content, finish_reason, usage', async () => {
  const { data: completion, response } = await client.chat.completions.create(greedy).withResponse();
  assert.match(response.headers.get('content-type'), /^application\/json/);
  assert.ok(response.headers.get('x-request-id'));
  assert.equal(completion.object, 'chat.completion');
  assert.equal(typeof completion.id, 'string');
  assert.ok(completion.id.length > 0);
  assert.ok(Number.isInteger(completion.created));
  assert.equal(completion.model, CHAT);
  assert.equal(completion.choices.length, 1);
  const [choice] = completion.choices;
  assert.equal(choice.index, 0);
  assert.equal(choice.message.role, 'assistant');
  assert.equal(typeof choice.message.content, 'string');
  assertUsage(completion.usage, greedy.max_tokens);
  assertFinish(choice.finish_reason, completion.usage, greedy.max_tokens);
  // temperature 0 is deterministic
  const again = await client.chat.completions.create(greedy);
  assert.equal(again.choices[0].message.content, choice.message.content);
});

test('thinking on: the text goes to reasoning_content, streamed as reasoning_content deltas', async () => {
  const thinking = { ...greedy, chat_template_kwargs: { enable_thinking: true } };
  const completion = await client.chat.completions.create(thinking);
  const { message } = completion.choices[0];
  assert.equal(typeof message.reasoning_content, 'string');
  assert.equal(typeof message.content, 'string');
  // the random demo model never closes its <think> block within 12 tokens
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.ok(message.reasoning_content.length > 0);
  const stream = await client.chat.completions.create({ ...thinking, stream: true });
  let reasoning = '';
  let content = '';
  for await (const chunk of stream) {
    reasoning += chunk.choices[0]?.delta?.reasoning_content ?? '';
    content += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(reasoning, message.reasoning_content);
  assert.equal(content, message.content);
});

test('max_tokens and max_completion_tokens end with finish_reason "length"', async () => {
  const one = await client.chat.completions.create({ ...greedy, max_tokens: 1 });
  assert.equal(one.choices[0].finish_reason, 'length');
  assert.equal(one.usage.completion_tokens, 1);
  const { max_tokens: _, ...rest } = greedy;
  const two = await client.chat.completions.create({ ...rest, max_completion_tokens: 2 });
  assert.equal(two.choices[0].finish_reason, 'length');
  assert.equal(two.usage.completion_tokens, 2);
});

test('streaming: chunks concatenate to the non-streamed answer, then a usage chunk', async () => {
  const plain = await client.chat.completions.create(greedy);
  const stream = await client.chat.completions.create({ ...greedy, stream: true, stream_options: { include_usage: true } });
  let content = '';
  let finishReason = null;
  let usage = null;
  const ids = new Set();
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(chunk.model, CHAT);
    ids.add(chunk.id);
    assert.equal(usage, null, 'the usage chunk comes last');
    if (chunk.usage) {
      assert.deepEqual(chunk.choices, []);
      usage = chunk.usage;
      continue;
    }
    assert.equal(chunk.choices.length, 1);
    const [choice] = chunk.choices;
    assert.equal(choice.index, 0);
    assert.equal(finishReason, null, 'no content after the finish_reason chunk');
    if (chunks === 1) assert.equal(choice.delta.role, 'assistant', 'the first chunk names the role, as OpenAI does');
    if (choice.delta.content) content += choice.delta.content;
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  assert.equal(ids.size, 1, 'one id for every chunk');
  assert.ok(chunks >= 2);
  assert.equal(content, plain.choices[0].message.content);
  assert.equal(finishReason, plain.choices[0].finish_reason);
  assert.deepEqual(usage, plain.usage);
});

test('streaming without include_usage sends no usage; the SDK stream helper assembles the answer', async () => {
  const plain = await client.chat.completions.create(greedy);
  const stream = await client.chat.completions.create({ ...greedy, stream: true });
  let content = '';
  for await (const chunk of stream) {
    assert.ok(chunk.usage === undefined || chunk.usage === null, JSON.stringify(chunk));
    content += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(content, plain.choices[0].message.content);

  const runner = client.chat.completions.stream(greedy);
  let deltas = '';
  runner.on('content', (delta) => { deltas += delta; });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].message.content, plain.choices[0].message.content);
  assert.equal(final.choices[0].finish_reason, plain.choices[0].finish_reason);
  assert.equal(deltas, plain.choices[0].message.content);
});

test('concurrent streams each get their own answer (continuous batching keeps sequences apart)', async () => {
  const requests = [0, 1, 2, 3, 4, 5].map((i) => ({
    ...greedy, max_tokens: 16, messages: [{ role: 'user', content: `Tell me about the number ${i % 3}.` }],
  }));
  const alone = [];
  for (const r of requests) alone.push((await client.chat.completions.create(r)).choices[0].message.content);
  assert.notEqual(alone[0], alone[1], 'different prompts, different answers');
  const together = await Promise.all(requests.map(async (r) => {
    let content = '';
    for await (const chunk of await client.chat.completions.create({ ...r, stream: true })) {
      content += chunk.choices[0]?.delta?.content ?? '';
    }
    return content;
  }));
  assert.deepEqual(together, alone);
});

test('completions.create (/v1/completions), plain and streamed', async () => {
  const request = { model: CHAT, prompt: 'The capital of France is', max_tokens: 8, temperature: 0, seed: 5 };
  const completion = await client.completions.create(request);
  assert.equal(completion.object, 'text_completion');
  assert.equal(completion.model, CHAT);
  assert.equal(completion.choices.length, 1);
  const [choice] = completion.choices;
  assert.equal(choice.index, 0);
  assert.equal(typeof choice.text, 'string');
  assertUsage(completion.usage, request.max_tokens);
  assertFinish(choice.finish_reason, completion.usage, request.max_tokens);

  const stream = await client.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finishReason = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'text_completion');
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text ?? '';
      if (c.finish_reason) finishReason = c.finish_reason;
    }
  }
  assert.equal(text, choice.text);
  assert.equal(finishReason, choice.finish_reason);
  assert.deepEqual(usage, completion.usage);
});

test('an unknown model is a NotFoundError (404)', async () => {
  const e = await rejection(client.chat.completions.create({ ...greedy, model: 'no-such-model' }));
  assert.ok(e instanceof OpenAI.NotFoundError, `${e.constructor.name}: ${e.message}`);
  assert.ok(e instanceof OpenAI.APIError);
  assert.equal(e.status, 404);
  assert.match(e.error.message, /no-such-model/);
  assert.ok(e.requestID, 'x-request-id reaches the SDK error');
  const streamed = await rejection(client.chat.completions.create({ ...greedy, model: 'no-such-model', stream: true }));
  assert.ok(streamed instanceof OpenAI.NotFoundError, `${streamed.constructor.name}: ${streamed.message}`);
  const completion = await rejection(client.completions.create({ model: 'no-such-model', prompt: 'x', max_tokens: 1 }));
  assert.ok(completion instanceof OpenAI.NotFoundError, `${completion.constructor.name}: ${completion.message}`);
});

test('a decision model on the chat endpoints is a BadRequestError (400)', async () => {
  const message = `Model '${DECISION}' is not an LLM / chat model. Use /v1/systemone for decision models.`;
  const e = await rejection(client.chat.completions.create({ ...greedy, model: DECISION }));
  assert.ok(e instanceof OpenAI.BadRequestError, `${e.constructor.name}: ${e.message}`);
  assert.equal(e.status, 400);
  assert.equal(e.error.message, message);
  assert.equal(e.type, 'invalid_request_error');
  const streamed = await rejection(client.chat.completions.create({ ...greedy, model: DECISION, stream: true }));
  assert.ok(streamed instanceof OpenAI.BadRequestError, `${streamed.constructor.name}: ${streamed.message}`);
  assert.equal(streamed.error.message, message);
  const completion = await rejection(client.completions.create({ model: DECISION, prompt: 'x', max_tokens: 1 }));
  assert.ok(completion instanceof OpenAI.BadRequestError, `${completion.constructor.name}: ${completion.message}`);
  assert.equal(completion.error.message, message);
});

test('a wrong API key is an AuthenticationError (401)', async () => {
  const wrong = new OpenAI({ apiKey: `wrong-${apiKey}`, baseURL: `${baseURL}/v1`, maxRetries: 0 });
  const e = await rejection(wrong.chat.completions.create(greedy));
  assert.ok(e instanceof OpenAI.AuthenticationError, `${e.constructor.name}: ${e.message}`);
  assert.equal(e.status, 401);
  assert.equal(e.error.message, 'invalid API key');
  assert.equal(e.type, 'authentication_error');
  const list = await rejection(wrong.models.list());
  assert.ok(list instanceof OpenAI.AuthenticationError, `${list.constructor.name}: ${list.message}`);
});

test('the SDK reaches /v1/systemone through its generic post()', async () => {
  const decision = await client.post('/systemone', {
    body: { model: 'default', state: 'The invoice PDF does not open', questions: { urgent: { type: 'noul' } } },
  });
  assert.equal(decision.model, DECISION);
  assert.equal(decision.answers.urgent.type, 'noul');
  assert.ok(decision.answers.urgent.noul >= 0 && decision.answers.urgent.noul <= 1);
});
