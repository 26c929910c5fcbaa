// An OpenID provider for the sign-in tests: oidc-provider (pinned in
// package.json) on 127.0.0.1, with its own stable sign-in page and a control
// endpoint that makes the next ID tokens wrong in chosen ways.
//
// Environment:
//   PORT           the port to listen on; the issuer is http://127.0.0.1:PORT
//   OIDC_CLIENTS   JSON [{client_id, client_secret, redirect_uris}]
//   OIDC_ACCOUNTS  JSON [{sub, email, email_verified, name}]
//   OIDC_ID_TOKEN_CLAIMS  `1`: the requested scopes' claims go into the ID
//                  token too (conformIdTokenClaims off, as some providers
//                  do); unset: oidc-provider's default, which gives them at
//                  UserInfo only (OpenID Connect Core 5.4)
//
// Prints `ready <issuer>` on stdout once it listens; exits on SIGTERM/SIGINT.
//
// Pages and endpoints besides oidc-provider's own:
//   GET  /interaction/:uid        the sign-in form (login prompt); a consent
//                                 prompt is granted at once and redirected on
//   POST /interaction/:uid/login  login (an account's sub or email) and any
//                                 non-empty password; an unknown account or an
//                                 empty password ends the request with
//                                 error=access_denied at the redirect_uri
//   POST /__test/tamper           {"mode": "..."}: how the next token
//                                 responses' id_token is made (see TAMPERS)
//   GET  /__test/requests         {"<path>": count} of every request so far

import * as crypto from 'node:crypto';
import Provider from 'oidc-provider';

// The JSON array in the environment variable `name` (`[]` when unset).
function envList(name) {
  const raw = process.env[name];
  if (!raw) return [];
  const value = JSON.parse(raw);
  if (!Array.isArray(value)) throw new Error(`${name} must be a JSON array`);
  return value;
}

// A new signing key: its private KeyObject and its public JWK (with `kid`).
function newKey(type, kid) {
  const { privateKey, publicKey } = type === 'EC'
    ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const alg = type === 'EC' ? 'ES256' : 'RS256';
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  return { kid, privateKey, publicJwk, privateJwk };
}

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be a port number');
const issuer = `http://127.0.0.1:${port}`;
const clients = envList('OIDC_CLIENTS');
const accounts = envList('OIDC_ACCOUNTS');

// The provider's own keys (RS256 first: the default for ID tokens), and the
// keys `rotate` adds later, published beside them and used for signing.
const rsaKey = newKey('RSA', 'rsa-1');
const ecKey = newKey('EC', 'ec-1');
const rotatedKeys = [];

// How the next token responses' id_token is made; `none` leaves it alone.
let tamperMode = 'none';

// Requests per path, for tests that count JWKS or token fetches.
const requestCounts = {};

// The account whose sub or email is `login`, or undefined.
function accountByLogin(login) {
  return accounts.find((a) => a.sub === login || a.email === login);
}

// oidc-provider's account model over OIDC_ACCOUNTS.
async function findAccount(_ctx, sub) {
  const account = accounts.find((a) => a.sub === sub);
  if (!account) return undefined;
  return {
    accountId: account.sub,
    async claims() {
      return {
        sub: account.sub,
        email: account.email,
        email_verified: account.email_verified,
        name: account.name,
      };
    },
  };
}

const provider = new Provider(issuer, {
  clients: clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    redirect_uris: c.redirect_uris,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    id_token_signed_response_alg: 'RS256',
    require_auth_time: true,
  })),
  jwks: { keys: [rsaKey.privateJwk, ecKey.privateJwk] },
  findAccount,
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
  },
  scopes: ['openid', 'email', 'profile'],
  // By default (as oidc-provider, Okta's thin ID tokens) the scopes'
  // claims come from UserInfo only; OIDC_ID_TOKEN_CLAIMS=1 puts them into
  // the ID token too.
  conformIdTokenClaims: process.env.OIDC_ID_TOKEN_CLAIMS !== '1',
  pkce: { required: () => true },
  responseTypes: ['code'],
  features: {
    devInteractions: { enabled: false },
    // the sign-in tests need no other flows
    rpInitiatedLogout: { enabled: false },
    userinfo: { enabled: true },
  },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = `<!DOCTYPE html><title>error</title><h1 id="error">${escapeHtml(out.error)}</h1>`
      + `<p id="error-description">${escapeHtml(out.error_description ?? '')}</p>`;
  },
});

// `s` with HTML's special characters escaped.
function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The whole request body as a string.
async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// The sign-in page for interaction `uid`.
function loginPage(uid, clientId) {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in to the test provider</title></head>
<body>
<h1>Sign in to the test provider</h1>
<p id="client">${escapeHtml(clientId)}</p>
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label for="login">Login</label> <input id="login" name="login" autocomplete="username">
<label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit" id="sign-in">Sign in</button>
</form>
</body></html>`;
}

// Grants every scope and claim the interaction asks for and finishes it.
async function grantConsent(ctx, details) {
  const { prompt, params, session, grantId } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const result = { consent: { grantId: await grant.save() } };
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
}

// GET /interaction/:uid: the sign-in form, or consent granted at once.
async function showInteraction(ctx) {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.prompt.name === 'consent') {
    await grantConsent(ctx, details);
    ctx.respond = false;
    return;
  }
  ctx.type = 'html';
  ctx.set('cache-control', 'no-store');
  ctx.body = loginPage(details.uid, details.params.client_id);
}

// POST /interaction/:uid/login: the account signs in, or access is denied.
async function submitLogin(ctx) {
  await provider.interactionDetails(ctx.req, ctx.res);
  const form = new URLSearchParams(await readBody(ctx.req));
  const account = accountByLogin(form.get('login') ?? '');
  const result = account && form.get('password')
    ? { login: { accountId: account.sub } }
    : { error: 'access_denied', error_description: 'unknown account or empty password' };
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  ctx.respond = false;
}

const TAMPERS = [
  'none', 'alg_none', 'wrong_key', 'unknown_kid', 'expired', 'other_issuer', 'hs256', 'rotate',
  'other_audience', 'two_audiences', 'wrong_nonce', 'userinfo_other_sub',
];

// POST /__test/tamper {"mode": ...}.
async function setTamper(ctx) {
  const { mode } = JSON.parse(await readBody(ctx.req));
  if (!TAMPERS.includes(mode)) {
    ctx.status = 400;
    ctx.body = { error: `unknown mode ${mode}; one of ${TAMPERS.join(', ')}` };
    return;
  }
  if (mode === 'rotate') rotatedKeys.push(newKey('RSA', `rsa-rotated-${rotatedKeys.length + 1}`));
  tamperMode = mode;
  ctx.body = { mode, keys: 2 + rotatedKeys.length };
}

const b64url = (value) => Buffer.from(value).toString('base64url');
const jsonB64 = (value) => b64url(JSON.stringify(value));

// A compact JWS over `payload` with `header`, signed RS256 with `privateKey`.
function signRs256(header, payload, privateKey) {
  const input = `${jsonB64(header)}.${jsonB64(payload)}`;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

// The client secret of the client `clientId`.
function clientSecret(clientId) {
  const client = clients.find((c) => c.client_id === clientId);
  if (!client) throw new Error(`no client ${clientId}`);
  return client.client_secret;
}

// The ID token `idToken` (compact, signed by the provider) re-made as the
// current tamper mode says.
function tamper(idToken) {
  const [h, p] = idToken.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  const now = Math.floor(Date.now() / 1000);
  switch (tamperMode) {
    case 'alg_none':
      return `${jsonB64({ alg: 'none' })}.${p}.`;
    case 'wrong_key':
      return signRs256(header, payload, newKey('RSA', header.kid).privateKey);
    case 'unknown_kid':
      return signRs256({ ...header, kid: `unknown-${crypto.randomUUID()}` }, payload, rsaKey.privateKey);
    case 'expired':
      return signRs256(header, { ...payload, iat: now - 3600, exp: now - 1800 }, rsaKey.privateKey);
    case 'other_issuer':
      return signRs256(header, { ...payload, iss: 'http://127.0.0.1:1/other' }, rsaKey.privateKey);
    case 'other_audience':
      return signRs256(header, { ...payload, aud: 'another-client' }, rsaKey.privateKey);
    case 'two_audiences':
      return signRs256(header, { ...payload, aud: [payload.aud, 'another-client'], azp: 'another-client' }, rsaKey.privateKey);
    case 'wrong_nonce':
      return signRs256(header, { ...payload, nonce: 'not-the-flows-nonce' }, rsaKey.privateKey);
    case 'hs256': {
      const input = `${jsonB64({ alg: 'HS256', typ: header.typ })}.${p}`;
      const mac = crypto.createHmac('sha256', clientSecret(payload.aud)).update(input).digest('base64url');
      return `${input}.${mac}`;
    }
    case 'rotate': {
      const current = rotatedKeys[rotatedKeys.length - 1];
      return signRs256({ ...header, kid: current.kid }, payload, current.privateKey);
    }
    default:
      return idToken;
  }
}

// Counts requests and rewrites the token and JWKS responses.
provider.use(async (ctx, next) => {
  requestCounts[ctx.path] = (requestCounts[ctx.path] ?? 0) + 1;
  await next();
  if (ctx.path === '/token' && ctx.status === 200 && typeof ctx.body?.id_token === 'string') {
    ctx.body = { ...ctx.body, id_token: tamper(ctx.body.id_token) };
  }
  if (ctx.path === '/me' && ctx.status === 200 && tamperMode === 'userinfo_other_sub') {
    ctx.body = { ...ctx.body, sub: 'someone-else', email: 'mallory@acme.example' };
  }
  if (ctx.path === '/jwks' && ctx.status === 200 && Array.isArray(ctx.body?.keys)) {
    ctx.body = { keys: [...ctx.body.keys, ...rotatedKeys.map((k) => k.publicJwk)] };
  }
});

// The sign-in pages and the test control endpoints.
provider.use(async (ctx, next) => {
  const interaction = ctx.path.match(/^\/interaction\/([^/]+)(\/login)?$/);
  if (interaction && ctx.method === 'GET' && !interaction[2]) return showInteraction(ctx);
  if (interaction && ctx.method === 'POST' && interaction[2]) return submitLogin(ctx);
  if (ctx.path === '/__test/tamper' && ctx.method === 'POST') return setTamper(ctx);
  if (ctx.path === '/__test/requests' && ctx.method === 'GET') {
    ctx.body = requestCounts;
    return undefined;
  }
  return next();
});

const server = provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
});

// Stops listening and exits.
function shutdown() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
