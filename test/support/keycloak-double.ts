/**
 * A local stand-in for the parts of Keycloak (≥ 17, Quarkus distribution) that the Keycloak
 * integration calls: the OpenID token endpoint and a slice of the Admin REST API. It checks what the
 * real server checks — credentials, bearer tokens and their expiry, the realm, client and role
 * lookups, uniqueness, JSON bodies, and that role-mapping bodies name existing roles by matching
 * name *and* id — and answers with Keycloak's status codes and error bodies.
 *
 * Tests can seed and inspect its state (realms, clients, roles, users, role mappings, sent
 * action e-mails, a request log) and inject faults: failing or slow answers on chosen paths,
 * revoked tokens, a clock jump, or the whole server going down and coming back on the same port.
 *
 * Not modelled: fine-grained admin permissions, composite roles, groups, federation, refresh
 * tokens, pagination beyond `first`/`max`.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DoubleUser {
  readonly id: string;
  username: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  emailVerified: boolean;
  enabled: boolean;
  readonly createdTimestamp: number;
  requiredActions: string[];
  attributes?: Record<string, string[]>;
  /** Only users with a password can log in at the token endpoint (the admin account). */
  password?: string;
}

export interface DoubleRole {
  readonly id: string;
  name: string;
  description?: string;
  readonly containerId: string;
  attributes: Record<string, string[]>;
}

export interface DoubleClient {
  readonly id: string;
  readonly clientId: string;
  /** By role name. */
  readonly roles: Map<string, DoubleRole>;
}

export interface DoubleRealm {
  readonly name: string;
  /** By user id. */
  readonly users: Map<string, DoubleUser>;
  /** By internal client id. */
  readonly clients: Map<string, DoubleClient>;
  /** User id → ids of the client roles directly mapped to the user. */
  readonly clientRoleMappings: Map<string, Set<string>>;
  duplicateEmailsAllowed: boolean;
}

export interface SentActionsEmail {
  readonly realm: string;
  readonly userId: string;
  readonly username: string;
  readonly email: string;
  readonly actions: readonly string[];
  readonly lifespan?: number;
}

export interface LoggedRequest {
  readonly method: string;
  /** Decoded path below the optional prefix, without query: `/admin/realms/crownlabs/users`. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Parsed JSON body, or the form fields of a token request (password left out). */
  readonly body?: unknown;
  /** Set once the answer is decided. */
  status: number;
  /** How the answer was produced. */
  outcome: 'handled' | 'injected-fault';
}

export interface FaultRule {
  readonly method?: string;
  /** Exact decoded path (see LoggedRequest.path) or a pattern tested against it. */
  readonly path: string | RegExp;
  /** How many matching requests it affects. Default 1; `Infinity` until cleared. */
  readonly times?: number;
  /** Status of the injected answer. Default 503. */
  readonly status?: number;
  /** Body of the injected answer: an object is sent as JSON, a string as plain text. */
  readonly body?: unknown;
}

export interface DelayRule {
  readonly method?: string;
  readonly path: string | RegExp;
  readonly times?: number;
  /** How long to hold the request before handling it normally. */
  readonly ms: number;
}

export interface KeycloakDoubleOptions {
  /** Realm of the admin account. Default `master`. */
  readonly adminRealm?: string;
  readonly adminUsername?: string;
  readonly adminPassword?: string;
  /** Realm created empty except for the target client. Default `crownlabs`. */
  readonly targetRealm?: string;
  /** Client created in the target realm. Default `k8s`. */
  readonly targetClientId?: string;
  /** `expires_in` of issued tokens. Default 60, Keycloak's default access token lifespan. */
  readonly tokenLifespanSeconds?: number;
  /** Serve below this path, e.g. `/auth` like Keycloak before 17 (WildFly). Default none. */
  readonly pathPrefix?: string;
  /** Ignore `exact=true` in user searches, like Keycloak before 12 did. */
  readonly legacyUserSearch?: boolean;
}

const KNOWN_REQUIRED_ACTIONS = new Set(['UPDATE_PASSWORD', 'VERIFY_EMAIL', 'UPDATE_PROFILE', 'CONFIGURE_TOTP', 'TERMS_AND_CONDITIONS']);
const DEFAULT_MAX_RESULTS = 100;
const MAX_BODY_BYTES = 1 << 20;

/** An answer in the making; thrown to stop handling early. */
class Answer {
  constructor(
    readonly status: number,
    readonly json?: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

const notFound = (error: string) => new Answer(404, { error });
const errorMessage = (status: number, message: string) => new Answer(status, { errorMessage: message });
const jaxrs = (status: number, reason: string) => new Answer(status, { error: `HTTP ${status} ${reason}` });

interface TokenClaims {
  readonly realm: string;
  readonly username: string;
}

export class KeycloakDouble {
  readonly realms = new Map<string, DoubleRealm>();
  readonly emails: SentActionsEmail[] = [];
  readonly requests: LoggedRequest[] = [];
  /** When false, execute-actions-email fails like a realm without SMTP settings. */
  smtpConfigured = true;
  /** Successful token requests so far. */
  tokensIssued = 0;

  private readonly server: Server;
  private readonly secret = randomBytes(32);
  private readonly validTokenIds = new Set<string>();
  private readonly faults: Array<FaultRule & { remaining: number }> = [];
  private readonly delays: Array<DelayRule & { remaining: number }> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private clockOffsetMs = 0;
  private listening = false;
  private port = 0;
  private readonly prefix: string;
  private readonly tokenLifespanSeconds: number;
  private readonly legacyUserSearch: boolean;

  private constructor(options: KeycloakDoubleOptions) {
    this.prefix = (options.pathPrefix ?? '').replace(/\/+$/, '');
    this.tokenLifespanSeconds = options.tokenLifespanSeconds ?? 60;
    this.legacyUserSearch = options.legacyUserSearch ?? false;
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((thrown: unknown) => {
        if (!response.headersSent && !response.destroyed) {
          response.writeHead(500, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: 'unknown_error', error_description: String(thrown) }));
        }
      });
    });
  }

  /** Starts a double on 127.0.0.1 with a random port, seeded with the admin account and target client. */
  static async start(options: KeycloakDoubleOptions = {}): Promise<KeycloakDouble> {
    const double = new KeycloakDouble(options);
    const adminRealm = options.adminRealm ?? 'master';
    const targetRealm = options.targetRealm ?? 'crownlabs';
    double.addRealm(adminRealm);
    double.addUser(adminRealm, {
      username: options.adminUsername ?? 'admin',
      password: options.adminPassword ?? 'admin-secret',
      enabled: true,
    });
    double.addRealm(targetRealm);
    double.addClient(targetRealm, options.targetClientId ?? 'k8s');
    await double.listen(0);
    return double;
  }

  /** Base URL to configure the client with (including the path prefix, if any). */
  get url(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}`;
  }

  // ---------------------------------------------------------------- seeding

  addRealm(name: string): DoubleRealm {
    const realm: DoubleRealm = { name, users: new Map(), clients: new Map(), clientRoleMappings: new Map(), duplicateEmailsAllowed: false };
    this.realms.set(name, realm);
    // Every Keycloak realm has these public clients; admin-cli is the one the token endpoint accepts here.
    for (const clientId of ['admin-cli', 'account']) this.addClient(name, clientId);
    return realm;
  }

  /** Returns the client's internal id. */
  addClient(realmName: string, clientId: string): string {
    const id = randomUUID();
    this.realm(realmName).clients.set(id, { id, clientId, roles: new Map() });
    return id;
  }

  /**
   * Stores a user as given (username and e-mail lower-cased, as Keycloak does). `allowDuplicate`
   * skips the uniqueness check, to model what federated stores can produce.
   */
  addUser(
    realmName: string,
    fields: Partial<Omit<DoubleUser, 'id' | 'createdTimestamp'>> & { username: string },
    options: { allowDuplicate?: boolean } = {},
  ): string {
    const realm = this.realm(realmName);
    if (!options.allowDuplicate && this.findUser(realmName, fields.username)) {
      throw new Error(`user ${fields.username} already exists in ${realmName}`);
    }
    const id = randomUUID();
    realm.users.set(id, {
      emailVerified: false,
      enabled: true,
      requiredActions: [],
      ...fields,
      id,
      username: fields.username.toLowerCase(),
      email: fields.email?.toLowerCase(),
      createdTimestamp: this.now(),
    });
    return id;
  }

  addClientRole(realmName: string, clientId: string, name: string, description?: string): DoubleRole {
    const client = this.clientByClientId(realmName, clientId);
    const role: DoubleRole = { id: randomUUID(), name, description, containerId: client.id, attributes: {} };
    client.roles.set(name, role);
    return role;
  }

  grantClientRole(realmName: string, username: string, clientId: string, roleName: string): void {
    const user = this.findUser(realmName, username);
    const role = this.clientByClientId(realmName, clientId).roles.get(roleName);
    if (!user || !role) throw new Error(`no user ${username} or role ${roleName} in ${realmName}`);
    this.mappingsOf(this.realm(realmName), user.id).add(role.id);
  }

  // ---------------------------------------------------------------- inspection

  realm(name: string): DoubleRealm {
    const realm = this.realms.get(name);
    if (!realm) throw new Error(`no realm ${name}`);
    return realm;
  }

  /** Users whose username is exactly `username` (case-insensitive); the first, or undefined. */
  findUser(realmName: string, username: string): DoubleUser | undefined {
    return this.findUsers(realmName, username)[0];
  }

  findUsers(realmName: string, username: string): DoubleUser[] {
    const wanted = username.toLowerCase();
    return [...this.realm(realmName).users.values()].filter((user) => user.username === wanted);
  }

  clientByClientId(realmName: string, clientId: string): DoubleClient {
    const client = [...this.realm(realmName).clients.values()].find((candidate) => candidate.clientId === clientId);
    if (!client) throw new Error(`no client ${clientId} in ${realmName}`);
    return client;
  }

  clientRole(realmName: string, clientId: string, roleName: string): DoubleRole | undefined {
    return this.clientByClientId(realmName, clientId).roles.get(roleName);
  }

  /** Names of the client roles of `clientId` mapped to the user, sorted. */
  userClientRoles(realmName: string, username: string, clientId: string): string[] {
    const realm = this.realm(realmName);
    const user = this.findUser(realmName, username);
    if (!user) return [];
    const client = this.clientByClientId(realmName, clientId);
    const held = this.mappingsOf(realm, user.id);
    return [...client.roles.values()]
      .filter((role) => held.has(role.id))
      .map((role) => role.name)
      .sort();
  }

  /** Logged requests, optionally only those whose method and path match. */
  requestsTo(method: string, path: string | RegExp): LoggedRequest[] {
    return this.requests.filter((entry) => entry.method === method && matches(path, entry.path));
  }

  /** Requests that changed something (anything but GET and token requests). */
  writes(): LoggedRequest[] {
    return this.requests.filter((entry) => entry.method !== 'GET' && !entry.path.endsWith('/openid-connect/token'));
  }

  clearRequestLog(): void {
    this.requests.length = 0;
  }

  // ---------------------------------------------------------------- faults

  /** The next `times` requests matching the rule get the given error answer instead of being handled. */
  failNext(rule: FaultRule): void {
    this.faults.push({ ...rule, remaining: rule.times ?? 1 });
  }

  /** The next `times` matching requests are held `ms` before being handled (to trigger client timeouts). */
  delayNext(rule: DelayRule): void {
    this.delays.push({ ...rule, remaining: rule.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.length = 0;
    this.delays.length = 0;
  }

  /** Every token issued so far stops being accepted, as after a server restart with new keys. */
  revokeTokens(): void {
    this.validTokenIds.clear();
  }

  /** Moves the double's clock, which decides token expiry. */
  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  /** Stops listening and drops open connections: clients get "connection refused". */
  async takeDown(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** Listens again on the same port; the state is kept, like a restarted server with a database. */
  async bringUp(): Promise<void> {
    if (this.listening) return;
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.takeDown();
  }

  // ---------------------------------------------------------------- HTTP

  private async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.listening = true;
  }

  private now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://double');
    const text = await readBody(request);
    const query = Object.fromEntries(url.searchParams);

    let answer: Answer;
    let entry: LoggedRequest | undefined;
    try {
      const segments = this.segments(url.pathname);
      const path = `/${segments.join('/')}`;
      entry = { method, path, query, body: logBody(request, text), status: 0, outcome: 'handled' };
      this.requests.push(entry);

      const delay = takeRule(this.delays, method, path);
      if (delay) await this.sleep(delay.ms);
      const fault = takeRule(this.faults, method, path);
      if (fault) {
        entry.outcome = 'injected-fault';
        answer = new Answer(fault.status ?? 503, fault.body ?? { error: 'injected fault' });
      } else {
        answer = this.route(method, segments, query, request, text);
      }
    } catch (thrown) {
      if (!(thrown instanceof Answer)) throw thrown;
      answer = thrown;
    }
    if (entry) entry.status = answer.status;
    if (response.destroyed) return;
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.json === undefined) {
      response.writeHead(answer.status, headers);
      response.end();
    } else if (typeof answer.json === 'string') {
      response.writeHead(answer.status, { 'content-type': 'text/plain', ...headers });
      response.end(answer.json);
    } else {
      response.writeHead(answer.status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(answer.json));
    }
  }

  /** Path segments below the prefix, percent-decoded. */
  private segments(pathname: string): string[] {
    let rest = pathname;
    if (this.prefix !== '') {
      if (rest !== this.prefix && !rest.startsWith(`${this.prefix}/`)) throw jaxrs(404, 'Not Found');
      rest = rest.slice(this.prefix.length);
    }
    try {
      return rest.split('/').filter((segment) => segment !== '').map(decodeURIComponent);
    } catch {
      throw jaxrs(400, 'Bad Request');
    }
  }

  private route(method: string, segments: string[], query: Record<string, string>, request: IncomingMessage, text: string): Answer {
    const [first, second, third, fourth, fifth] = segments;
    if (first === 'realms' && second !== undefined && third === 'protocol' && fourth === 'openid-connect' && fifth === 'token' && segments.length === 5) {
      if (method !== 'POST') throw jaxrs(405, 'Method Not Allowed');
      return this.token(second, request, text);
    }
    if (first === 'admin' && second === 'realms' && third !== undefined) {
      const claims = this.authenticate(request);
      const realm = this.realms.get(third);
      if (!realm) throw notFound('Realm not found.');
      // A token of the admin realm may manage every realm; any other realm's token only its own.
      if (claims.realm !== 'master' && claims.realm !== realm.name) throw jaxrs(403, 'Forbidden');
      return this.admin(realm, method, segments.slice(3), query, request, text);
    }
    throw jaxrs(404, 'Not Found');
  }

  // ---------------------------------------------------------------- token endpoint

  private token(realmName: string, request: IncomingMessage, text: string): Answer {
    const realm = this.realms.get(realmName);
    if (!realm) throw notFound('Realm does not exist');
    if (!contentTypeIs(request, 'application/x-www-form-urlencoded')) throw jaxrs(415, 'Unsupported Media Type');
    const form = new URLSearchParams(text);
    const grantType = form.get('grant_type');
    const oauth = (status: number, error: string, description: string) => new Answer(status, { error, error_description: description });
    if (!grantType) throw oauth(400, 'invalid_request', 'Missing form parameter: grant_type');
    const clientId = form.get('client_id');
    if (clientId !== 'admin-cli') throw oauth(401, 'invalid_client', 'Invalid client or Invalid client credentials');
    if (grantType !== 'password') throw oauth(400, 'unsupported_grant_type', 'Unsupported grant_type');
    const user = this.findUser(realmName, form.get('username') ?? '');
    if (!user || user.password === undefined || !user.enabled || user.password !== form.get('password')) {
      throw oauth(401, 'invalid_grant', 'Invalid user credentials');
    }
    this.tokensIssued += 1;
    return new Answer(200, {
      access_token: this.issueToken(realm.name, user),
      expires_in: this.tokenLifespanSeconds,
      refresh_expires_in: 1800,
      refresh_token: randomBytes(24).toString('base64url'),
      token_type: 'Bearer',
      'not-before-policy': 0,
      session_state: randomUUID(),
      scope: 'profile email',
    });
  }

  /** A JWT signed with HS256 by a per-double secret; tokens of another double instance never verify. */
  private issueToken(realmName: string, user: DoubleUser): string {
    const issuedAt = Math.floor(this.now() / 1000);
    const jti = randomUUID();
    this.validTokenIds.add(jti);
    const header = base64url({ alg: 'HS256', typ: 'JWT' });
    const payload = base64url({
      exp: issuedAt + this.tokenLifespanSeconds,
      iat: issuedAt,
      jti,
      iss: `${this.url}/realms/${realmName}`,
      sub: user.id,
      typ: 'Bearer',
      azp: 'admin-cli',
      preferred_username: user.username,
    });
    return `${header}.${payload}.${this.sign(`${header}.${payload}`)}`;
  }

  private sign(data: string): string {
    return createHmac('sha256', this.secret).update(data).digest('base64url');
  }

  private authenticate(request: IncomingMessage): TokenClaims {
    const unauthorized = new Answer(401, { error: 'HTTP 401 Unauthorized' }, { 'www-authenticate': 'Bearer' });
    const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
    const parts = match?.[1]?.split('.');
    if (!parts || parts.length !== 3) throw unauthorized;
    const [header, payload, signature] = parts as [string, string, string];
    const expected = Buffer.from(this.sign(`${header}.${payload}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw unauthorized;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= this.now()) throw unauthorized;
    if (typeof claims.jti !== 'string' || !this.validTokenIds.has(claims.jti)) throw unauthorized;
    const realm = String(claims.iss).split('/realms/').pop() ?? '';
    if (!this.realms.has(realm)) throw unauthorized;
    return { realm, username: String(claims.preferred_username) };
  }

  // ---------------------------------------------------------------- admin API

  private admin(
    realm: DoubleRealm,
    method: string,
    rest: string[],
    query: Record<string, string>,
    request: IncomingMessage,
    text: string,
  ): Answer {
    const body = () => jsonBody(request, text);
    const [collection, id, sub, subId, subSub] = rest;
    const allow = (...methods: string[]) => {
      if (!methods.includes(method)) throw jaxrs(405, 'Method Not Allowed');
    };

    if (collection === 'clients') {
      if (id === undefined) {
        allow('GET');
        return new Answer(200, this.listClients(realm, query));
      }
      const client = realm.clients.get(id);
      if (!client) throw notFound('Could not find client');
      if (sub === undefined && rest.length === 2) {
        allow('GET');
        return new Answer(200, clientRepresentation(client));
      }
      if (sub === 'roles' && rest.length === 3) {
        allow('GET', 'POST');
        if (method === 'GET') return new Answer(200, [...client.roles.values()].map(roleRepresentation));
        return this.createRole(realm, client, body());
      }
      if (sub === 'roles' && subId !== undefined && rest.length === 4) {
        allow('GET', 'PUT', 'DELETE');
        const role = client.roles.get(subId);
        if (!role) throw notFound('Could not find role');
        if (method === 'GET') return new Answer(200, roleRepresentation(role));
        if (method === 'PUT') return this.updateRole(client, role, body());
        client.roles.delete(role.name);
        for (const held of realm.clientRoleMappings.values()) held.delete(role.id);
        return new Answer(204);
      }
    }

    if (collection === 'users') {
      if (id === undefined) {
        allow('GET', 'POST');
        if (method === 'GET') return new Answer(200, this.searchUsers(realm, query));
        return this.createUser(realm, body());
      }
      const user = realm.users.get(id);
      if (!user) throw notFound('User not found');
      if (sub === undefined && rest.length === 2) {
        allow('GET', 'PUT', 'DELETE');
        if (method === 'GET') return new Answer(200, userRepresentation(user));
        if (method === 'PUT') return this.updateUser(realm, user, body());
        realm.users.delete(user.id);
        realm.clientRoleMappings.delete(user.id);
        return new Answer(204);
      }
      if (sub === 'execute-actions-email' && rest.length === 3) {
        allow('PUT');
        return this.executeActionsEmail(realm, user, query, body());
      }
      if (sub === 'role-mappings' && subId === 'clients' && subSub !== undefined && rest.length === 5) {
        allow('GET', 'POST', 'DELETE');
        const client = realm.clients.get(subSub);
        if (!client) throw notFound('Could not find client');
        return this.clientRoleMappings(realm, user, client, method, method === 'GET' ? undefined : body());
      }
    }
    throw jaxrs(404, 'Not Found');
  }

  /** `clientId` is an exact match unless `search=true`, as in ClientsResource. */
  private listClients(realm: DoubleRealm, query: Record<string, string>): unknown[] {
    const wanted = query.clientId;
    const search = query.search === 'true';
    return [...realm.clients.values()]
      .filter((client) => wanted === undefined || (search ? client.clientId.includes(wanted) : client.clientId === wanted))
      .map(clientRepresentation);
  }

  private createRole(realm: DoubleRealm, client: DoubleClient, input: unknown): Answer {
    const fields = requireObject(input);
    if (typeof fields.name !== 'string' || fields.name === '') throw jaxrs(400, 'Bad Request');
    const description = optionalString(fields, 'description');
    if (client.roles.has(fields.name)) throw errorMessage(409, `Role with name ${fields.name} already exists`);
    const role: DoubleRole = { id: randomUUID(), name: fields.name, description, containerId: client.id, attributes: {} };
    client.roles.set(role.name, role);
    return new Answer(201, undefined, {
      location: `${this.url}/admin/realms/${realm.name}/clients/${client.id}/roles/${encodeURIComponent(role.name)}`,
    });
  }

  private updateRole(client: DoubleClient, role: DoubleRole, input: unknown): Answer {
    const fields = requireObject(input);
    const name = optionalString(fields, 'name');
    const description = optionalString(fields, 'description');
    // RoleResource.updateRole copies name and description as sent: a missing name would blank the role.
    if (name === undefined || name === '') throw jaxrs(400, 'Bad Request');
    if (name !== role.name) {
      if (client.roles.has(name)) throw errorMessage(409, `Role with name ${name} already exists`);
      client.roles.delete(role.name);
      role.name = name;
      client.roles.set(name, role);
    }
    role.description = description;
    return new Answer(204);
  }

  /**
   * UsersResource.getUsers: `username`, `email`, `firstName`, `lastName` are case-insensitive
   * substring filters (all must match), exact when `exact=true`; `search` matches any of them.
   * Results are ordered by username and capped at `max` (default 100).
   */
  private searchUsers(realm: DoubleRealm, query: Record<string, string>): unknown[] {
    const exact = query.exact === 'true' && !this.legacyUserSearch;
    const like = (value: string | undefined, wanted: string) => {
      const have = (value ?? '').toLowerCase();
      const want = wanted.toLowerCase();
      return exact ? have === want : have.includes(want);
    };
    const filters: Array<[keyof DoubleUser, string]> = [];
    for (const field of ['username', 'email', 'firstName', 'lastName'] as const) {
      const wanted = query[field];
      if (wanted !== undefined) filters.push([field, wanted]);
    }
    const search = query.search?.trim().toLowerCase();
    const first = Number.parseInt(query.first ?? '0', 10) || 0;
    const max = query.max !== undefined ? Number.parseInt(query.max, 10) : DEFAULT_MAX_RESULTS;
    return [...realm.users.values()]
      .filter((user) => filters.every(([field, wanted]) => like(user[field] as string | undefined, wanted)))
      .filter(
        (user) =>
          search === undefined ||
          [user.username, user.email, user.firstName, user.lastName].some((value) => (value ?? '').toLowerCase().includes(search)),
      )
      .sort((a, b) => a.username.localeCompare(b.username))
      .slice(first, first + max)
      .map(userRepresentation);
  }

  private createUser(realm: DoubleRealm, input: unknown): Answer {
    const fields = requireObject(input);
    const username = optionalString(fields, 'username');
    const email = optionalString(fields, 'email');
    const profile = this.checkUserFields(fields);
    if (username === undefined || username.trim() === '') throw errorMessage(400, 'User name is missing');
    if (this.findUser(realm.name, username)) throw errorMessage(409, 'User exists with same username');
    if (email !== undefined && this.emailTaken(realm, email)) throw errorMessage(409, 'User exists with same email');
    const user: DoubleUser = {
      id: randomUUID(),
      username: username.toLowerCase(),
      createdTimestamp: this.now(),
      firstName: profile.firstName,
      lastName: profile.lastName,
      email: email?.toLowerCase(),
      // UserResource: a user created without `enabled: true` is disabled.
      enabled: profile.enabled === true,
      emailVerified: profile.emailVerified === true,
      requiredActions: profile.requiredActions ?? [],
      attributes: profile.attributes,
    };
    realm.users.set(user.id, user);
    return new Answer(201, undefined, { location: `${this.url}/admin/realms/${realm.name}/users/${user.id}` });
  }

  /** Fields absent from the representation are left as they are. */
  private updateUser(realm: DoubleRealm, user: DoubleUser, input: unknown): Answer {
    const fields = requireObject(input);
    const username = optionalString(fields, 'username');
    const email = optionalString(fields, 'email');
    const profile = this.checkUserFields(fields);
    if (username !== undefined && username.toLowerCase() !== user.username) throw errorMessage(400, 'error-user-attribute-read-only');
    if (email !== undefined && email.toLowerCase() !== user.email && this.emailTaken(realm, email, user.id)) {
      throw errorMessage(409, 'User exists with same email');
    }
    if (email !== undefined) user.email = email === '' ? undefined : email.toLowerCase();
    if (profile.firstName !== undefined) user.firstName = profile.firstName;
    if (profile.lastName !== undefined) user.lastName = profile.lastName;
    if (profile.enabled !== undefined) user.enabled = profile.enabled;
    if (profile.emailVerified !== undefined) user.emailVerified = profile.emailVerified;
    if (profile.requiredActions !== undefined) user.requiredActions = profile.requiredActions;
    if (profile.attributes !== undefined) user.attributes = profile.attributes;
    return new Answer(204);
  }

  /** Type checks a JSON mapper would make, plus the user profile's e-mail format check. */
  private checkUserFields(fields: Record<string, unknown>) {
    const email = optionalString(fields, 'email');
    if (email !== undefined && email !== '' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
      throw new Answer(400, { field: 'email', errorMessage: 'invalidEmailMessage', params: ['email', email] });
    }
    const requiredActions = fields.requiredActions;
    if (requiredActions !== undefined && !(Array.isArray(requiredActions) && requiredActions.every((a) => typeof a === 'string'))) {
      throw badJson();
    }
    const attributes = fields.attributes;
    if (attributes !== undefined && (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes))) throw badJson();
    return {
      firstName: optionalString(fields, 'firstName'),
      lastName: optionalString(fields, 'lastName'),
      enabled: optionalBoolean(fields, 'enabled'),
      emailVerified: optionalBoolean(fields, 'emailVerified'),
      requiredActions: requiredActions as string[] | undefined,
      attributes: attributes as Record<string, string[]> | undefined,
    };
  }

  private emailTaken(realm: DoubleRealm, email: string, exceptUserId?: string): boolean {
    if (realm.duplicateEmailsAllowed || email === '') return false;
    const wanted = email.toLowerCase();
    return [...realm.users.values()].some((other) => other.id !== exceptUserId && other.email === wanted);
  }

  private executeActionsEmail(realm: DoubleRealm, user: DoubleUser, query: Record<string, string>, input: unknown): Answer {
    let lifespan: number | undefined;
    if (query.lifespan !== undefined) {
      // JAX-RS answers 404 when a query parameter cannot be converted to its declared type.
      if (!/^-?\d+$/.test(query.lifespan)) throw jaxrs(404, 'Not Found');
      lifespan = Number(query.lifespan);
    }
    if (!Array.isArray(input) || !input.every((action) => typeof action === 'string')) throw badJson();
    if (!user.email) throw errorMessage(400, 'User email missing');
    if (!user.enabled) throw errorMessage(400, 'User is disabled');
    if (!input.every((action) => KNOWN_REQUIRED_ACTIONS.has(action))) throw errorMessage(400, 'Provided invalid required actions');
    if (!this.smtpConfigured) throw errorMessage(500, 'Failed to send execute actions email');
    this.emails.push({ realm: realm.name, userId: user.id, username: user.username, email: user.email, actions: [...input], lifespan });
    return new Answer(204);
  }

  /**
   * ClientRoleMappingsResource: each role in a POST/DELETE body must exist on the client with the
   * same name and id, or the whole request fails with 404 "Role not found" (one transaction).
   * A DELETE without body removes every mapping of the client.
   */
  private clientRoleMappings(realm: DoubleRealm, user: DoubleUser, client: DoubleClient, method: string, input: unknown): Answer {
    const held = this.mappingsOf(realm, user.id);
    if (method === 'GET') {
      return new Answer(
        200,
        [...client.roles.values()].filter((role) => held.has(role.id)).map(roleRepresentation),
      );
    }
    if (method === 'DELETE' && input === undefined) {
      for (const role of client.roles.values()) held.delete(role.id);
      return new Answer(204);
    }
    if (!Array.isArray(input)) throw badJson();
    const roles = input.map((element) => {
      const fields = requireObject(element);
      const role = typeof fields.name === 'string' ? client.roles.get(fields.name) : undefined;
      if (!role || role.id !== fields.id) throw notFound('Role not found');
      return role;
    });
    for (const role of roles) {
      if (method === 'POST') held.add(role.id);
      else held.delete(role.id);
    }
    return new Answer(204);
  }

  private mappingsOf(realm: DoubleRealm, userId: string): Set<string> {
    let held = realm.clientRoleMappings.get(userId);
    if (!held) {
      held = new Set();
      realm.clientRoleMappings.set(userId, held);
    }
    return held;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      this.timers.add(timer);
    });
  }
}

// ---------------------------------------------------------------- representations

function clientRepresentation(client: DoubleClient) {
  return {
    id: client.id,
    clientId: client.clientId,
    name: client.clientId,
    enabled: true,
    publicClient: client.clientId === 'admin-cli' || client.clientId === 'account',
    protocol: 'openid-connect',
  };
}

function roleRepresentation(role: DoubleRole) {
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    composite: false,
    clientRole: true,
    containerId: role.containerId,
    attributes: role.attributes,
  };
}

function userRepresentation(user: DoubleUser) {
  return {
    id: user.id,
    username: user.username,
    firstName: user.firstName,
    lastName: user.lastName,
    email: user.email,
    emailVerified: user.emailVerified,
    enabled: user.enabled,
    createdTimestamp: user.createdTimestamp,
    totp: false,
    disableableCredentialTypes: [],
    requiredActions: user.requiredActions,
    notBefore: 0,
    attributes: user.attributes,
    access: { manageGroupMembership: true, view: true, mapRoles: true, impersonate: true, manage: true },
  };
}

// ---------------------------------------------------------------- helpers

function matches(pattern: string | RegExp, path: string): boolean {
  return typeof pattern === 'string' ? pattern === path : pattern.test(path);
}

function takeRule<R extends { method?: string; path: string | RegExp; remaining: number }>(rules: R[], method: string, path: string): R | undefined {
  const index = rules.findIndex((rule) => rule.remaining > 0 && (rule.method === undefined || rule.method === method) && matches(rule.path, path));
  if (index < 0) return undefined;
  const rule = rules[index] as R;
  rule.remaining -= 1;
  if (rule.remaining <= 0) rules.splice(index, 1);
  return rule;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function contentTypeIs(request: IncomingMessage, type: string): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === type;
}

function badJson(): Answer {
  return new Answer(400, { error: 'unknown_error' });
}

/** The request's JSON body; `undefined` when there is none. Wrong media type → 415, bad JSON → 400. */
function jsonBody(request: IncomingMessage, text: string): unknown {
  if (text.trim() === '') return undefined;
  if (!contentTypeIs(request, 'application/json')) throw jaxrs(415, 'Unsupported Media Type');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badJson();
  }
}

function requireObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badJson();
  return value as Record<string, unknown>;
}

function optionalString(fields: Record<string, unknown>, key: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badJson();
  return value;
}

function optionalBoolean(fields: Record<string, unknown>, key: string): boolean | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw badJson();
  return value;
}

function logBody(request: IncomingMessage, text: string): unknown {
  if (text === '') return undefined;
  if (contentTypeIs(request, 'application/x-www-form-urlencoded')) {
    const form = Object.fromEntries(new URLSearchParams(text));
    delete form.password;
    return form;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
