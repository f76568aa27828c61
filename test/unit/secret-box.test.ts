import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { findParameter, KNOWN_VARIABLES, PROVIDERS } from '../../src/modules/env-mgmt/providers.js';
import { maskSecret, SecretBox } from '../../src/secrets/secret-box.js';

/** Flips one bit of the base64url segment at `index` of a sealed text. */
function tamper(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index]!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);

  it('round-trips ASCII, unicode and empty secrets', () => {
    for (const secret of ['sk-1234567890abcdef', 'pässwörd 🔑 日本語', '', 'x'.repeat(5000)]) {
      assert.equal(box.open('OPENAI_API_KEY', box.seal('OPENAI_API_KEY', secret)), secret);
    }
  });

  it('opens with another box holding the same key', () => {
    const sealed = box.seal('EXA_API_KEY', 'value');
    assert.equal(new SecretBox(Buffer.from(key)).open('EXA_API_KEY', sealed), 'value');
  });

  it('writes v1.<iv>.<tag>.<ciphertext> in base64url', () => {
    const sealed = box.seal('K', 'abcd');
    const parts = sealed.split('.');
    assert.equal(parts.length, 4);
    assert.equal(parts[0], 'v1');
    assert.equal(Buffer.from(parts[1]!, 'base64url').length, 12);
    assert.equal(Buffer.from(parts[2]!, 'base64url').length, 16);
    assert.equal(Buffer.from(parts[3]!, 'base64url').length, 4);
    for (const p of parts.slice(1)) assert.match(p, /^[A-Za-z0-9_-]+$/);
  });

  it('uses a fresh IV for every seal', () => {
    const one = box.seal('K', 'same secret');
    const two = box.seal('K', 'same secret');
    assert.notEqual(one, two);
    assert.notEqual(one.split('.')[1], two.split('.')[1]);
    assert.equal(box.open('K', one), box.open('K', two));
  });

  it('does not contain the plaintext', () => {
    const secret = 'sk-live-VERYSECRETVALUE-1234567890';
    const sealed = box.seal('K', secret);
    assert.ok(!sealed.includes(secret));
    assert.ok(!sealed.includes(Buffer.from(secret).toString('base64url')));
    assert.ok(!sealed.includes('VERYSECRET'));
  });

  it('refuses a tampered ciphertext, tag or IV', () => {
    const sealed = box.seal('K', 'secret value');
    for (const index of [1, 2, 3]) assert.throws(() => box.open('K', tamper(sealed, index)));
  });

  it('refuses to open under another name', () => {
    const sealed = box.seal('OPENAI_API_KEY', 'secret');
    assert.throws(() => box.open('ANTHROPIC_API_KEY', sealed));
  });

  it('refuses to open under another key', () => {
    const sealed = box.seal('K', 'secret');
    assert.throws(() => new SecretBox(randomBytes(32)).open('K', sealed));
  });

  it('refuses unreadable text', () => {
    assert.throws(() => box.open('K', 'plain text'), /unreadable secret/);
    assert.throws(() => box.open('K', 'v2.a.b.c'), /unreadable secret/);
    assert.throws(() => box.open('K', 'v1..b.c'), /unreadable secret/);
  });

  it('requires a 32-byte key', () => {
    for (const length of [0, 16, 31, 33, 64]) assert.throws(() => new SecretBox(Buffer.alloc(length, 1)), /32 bytes/);
    assert.doesNotThrow(() => new SecretBox(Buffer.alloc(32, 1)));
  });
});

describe('maskSecret', () => {
  it('stars a secret of up to 12 characters entirely', () => {
    assert.equal(maskSecret(''), '');
    assert.equal(maskSecret('abc'), '***');
    assert.equal(maskSecret('123456789012'), '************');
  });

  it('keeps 4 characters at each end of a longer secret', () => {
    assert.equal(maskSecret('sk-1234567890abcdef'), 'sk-1***********cdef');
    assert.equal(maskSecret('1234567890123'), '1234*****0123');
  });

  it('keeps the length', () => {
    for (const s of ['a', 'x'.repeat(12), 'y'.repeat(13), 'z'.repeat(80)]) assert.equal(maskSecret(s).length, s.length);
  });
});

describe('env-mgmt providers', () => {
  it('lists the 17 providers in PySpur order, then the integrations PySpur reads from its environment', () => {
    assert.deepEqual(
      PROVIDERS.map((p) => p.id),
      [
        'openai',
        'azure-openai',
        'anthropic',
        'gemini',
        'deepseek',
        'cohere',
        'voyage',
        'mistral',
        'pinecone',
        'weaviate',
        'qdrant',
        'chroma',
        'supabase',
        'reddit',
        'firecrawl',
        'slack',
        'exa',
        'github',
        'google',
        'jina',
        'resend',
        'sendgrid',
        'mcp',
        'http',
      ],
    );
  });

  it('carries names, categories and icons', () => {
    assert.deepEqual(PROVIDERS[1], {
      id: 'azure-openai',
      name: 'Azure OpenAI',
      description: 'Azure-hosted OpenAI models',
      category: 'llm',
      parameters: [
        { name: 'AZURE_OPENAI_API_KEY', description: 'Azure OpenAI API Key', required: true, type: 'password' },
        { name: 'AZURE_OPENAI_ENDPOINT', description: 'Azure OpenAI Endpoint URL', required: true, type: 'text' },
        {
          name: 'AZURE_OPENAI_API_VERSION',
          description: 'API Version (e.g. 2023-05-15)',
          required: true,
          type: 'text',
        },
      ],
      icon: 'azure',
    });
    assert.deepEqual(
      PROVIDERS.slice(0, 17).map((p) => p.category),
      [
        'llm',
        'llm',
        'llm',
        'llm',
        'llm',
        'llm',
        'llm',
        'llm',
        'vectorstore',
        'vectorstore',
        'vectorstore',
        'vectorstore',
        'vectorstore',
        'social',
        'scraping',
        'messaging',
        'search',
      ],
    );
    assert.equal(PROVIDERS.find((p) => p.id === 'reddit')!.icon, 'logos:reddit-icon');
  });

  it("knows PySpur's 34 variables, in provider order, then the integrations' credentials, MCP servers' and HTTP requests', without repeats", () => {
    assert.equal(KNOWN_VARIABLES.length, 51);
    assert.equal(new Set(KNOWN_VARIABLES).size, 51);
    assert.deepEqual(KNOWN_VARIABLES.slice(0, 4), [
      'OPENAI_API_KEY',
      'AZURE_OPENAI_API_KEY',
      'AZURE_OPENAI_ENDPOINT',
      'AZURE_OPENAI_API_VERSION',
    ]);
    assert.deepEqual(KNOWN_VARIABLES.slice(31, 34), ['SLACK_BOT_TOKEN', 'SLACK_USER_TOKEN', 'EXA_API_KEY']);
    assert.deepEqual(KNOWN_VARIABLES.slice(34), [
      'GITHUB_ACCESS_TOKEN',
      'GOOGLE_ACCESS_TOKEN',
      'JINA_API_KEY',
      'RESEND_API_KEY',
      'SENDGRID_API_KEY',
      'MCP_API_BASE',
      'MCP_API_KEY',
      'MCP_API_BASE_2',
      'MCP_API_KEY_2',
      'MCP_API_BASE_3',
      'MCP_API_KEY_3',
      'HTTP_API_BASE',
      'HTTP_API_KEY',
      'HTTP_API_BASE_2',
      'HTTP_API_KEY_2',
      'HTTP_API_BASE_3',
      'HTTP_API_KEY_3',
    ]);
    assert.deepEqual(
      [...KNOWN_VARIABLES],
      PROVIDERS.flatMap((p) => p.parameters.map((param) => param.name)),
    );
  });

  it('finds parameters with their type and requiredness', () => {
    assert.deepEqual(findParameter('AZURE_OPENAI_ENDPOINT'), {
      name: 'AZURE_OPENAI_ENDPOINT',
      description: 'Azure OpenAI Endpoint URL',
      required: true,
      type: 'text',
    });
    assert.equal(findParameter('SUPABASE_ANON_KEY')!.required, false);
    assert.equal(findParameter('SUPABASE_ANON_KEY')!.type, 'password');
    assert.deepEqual(findParameter('REDDIT_USERNAME'), {
      name: 'REDDIT_USERNAME',
      description: 'Reddit Username',
      required: false,
      type: 'text',
    });
    assert.equal(findParameter('OPENAI_API_KEY')!.type, 'password');
    assert.equal(findParameter('OPENAI_API_KEY')!.required, true);
    assert.equal(findParameter('RESEND_API_KEY')!.type, 'password');
    for (const base of [
      'GITHUB_API_BASE',
      'SLACK_API_BASE',
      'FIRECRAWL_API_BASE',
      'EXA_API_BASE',
      'JINA_API_BASE',
      'REDDIT_API_BASE',
      'REDDIT_AUTH_BASE',
      'RESEND_API_BASE',
      'SENDGRID_API_BASE',
      'GOOGLE_SHEETS_API_BASE',
      'YOUTUBE_API_BASE',
    ]) {
      assert.deepEqual(
        { ...findParameter(base)!, description: '' },
        { name: base, description: '', required: false, type: 'text' },
        base,
      );
      assert.ok(!KNOWN_VARIABLES.includes(base), `${base} is settable but, like OPENAI_API_BASE, not in the list`);
    }
    assert.equal(findParameter('openai_api_key'), undefined);
  });
});
