import { Inject, Injectable } from '@nestjs/common';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import { privateAddressKind, unbracketed } from '../domain/webhook-address.js';

/** Why a URL may not be sent to; the message names the host, the address and what to do. */
export class WebhookAddressRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookAddressRefused';
  }
}

const ALLOW_HINT =
  'Webhooks are sent to public addresses only; give a public http(s) URL (a platform run for local use may set ' +
  'ORMUZ_WEBHOOKS_ALLOW_PRIVATE=true on approvals).';

/**
 * Keeps webhooks from reaching the platform's own host and network (SSRF): a URL whose host is, or resolves to, a
 * loopback, private, link-local, unique-local or unspecified address is refused when it is registered
 * ({@link assertSendable}) and again at every attempt, where {@link lookup} checks the addresses the connection is
 * actually made to. DNS may have changed since registration, and checking then connecting to a name resolved twice
 * would leave a gap (DNS rebinding); the connection's own lookup leaves none. `ORMUZ_WEBHOOKS_ALLOW_PRIVATE=true`
 * turns the guard off, for local platforms.
 */
@Injectable()
export class WebhookAddressGuard {
  private readonly allowPrivate: boolean;

  constructor(@Inject(APPROVALS_CONFIG) config: Pick<ApprovalsConfig, 'webhooks'>) {
    this.allowPrivate = config.webhooks.allowPrivate;
  }

  /**
   * Resolves `url`'s host and throws {@link WebhookAddressRefused} when it is not one webhooks may reach: a scheme
   * other than http(s), a private address, or a name that does not resolve (nothing could be sent to it).
   */
  async assertSendable(url: URL): Promise<void> {
    this.assertDirect(url);
    const host = unbracketed(url.hostname);
    if (this.allowPrivate || isIP(host)) return;
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true }, (err, found) =>
        err
          ? reject(new WebhookAddressRefused(`The host ${host} does not resolve (${err.code ?? err.message}).`))
          : resolve(found),
      ),
    );
    this.check(
      host,
      addresses.map((a) => a.address),
    );
  }

  /**
   * The checks no DNS lookup makes: the scheme, and an address written in the URL itself (a connection to an IP
   * literal never calls {@link lookup}). The sender runs these before each attempt; a name is checked by the lookup.
   */
  assertDirect(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new WebhookAddressRefused(
        `Webhooks are sent over http or https only, not ${url.protocol.replace(/:$/, '')}.`,
      );
    }
    const host = unbracketed(url.hostname);
    if (isIP(host)) this.check(host, [host]);
  }

  /**
   * A `lookup` for node:http(s) that refuses, with {@link WebhookAddressRefused}, a name resolving to any address
   * webhooks may not reach (one bad address of several is enough: the connection could pick it).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      try {
        this.check(
          hostname,
          addresses.map((a) => a.address),
        );
      } catch (refused) {
        return callback(refused as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };

  private check(host: string, addresses: readonly string[]): void {
    if (this.allowPrivate) return;
    for (const address of addresses) {
      const kind = privateAddressKind(address);
      if (kind === undefined) continue;
      const named = address === host ? `${host} is` : `${host} resolves to ${address},`;
      throw new WebhookAddressRefused(`${named} a ${kind} address. ${ALLOW_HINT}`);
    }
  }
}
