import { privateAddressKind, unbracketed } from './webhook-address.js';

describe('webhook addresses', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    // IPv4-mapped IPv6, in both spellings: the IPv4 address decides.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:0.0.0.0', 'unspecified'],
    // Not an IP address at all: callers pass resolved addresses, so this is refused.
    ['localhost', 'unspecified'],
  ])('refuses %s as %s', (address, kind) => {
    expect(privateAddressKind(address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '172.32.0.1',
    '172.15.255.255',
    '192.169.0.1',
    '100.128.0.1',
    '11.0.0.1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '2606:4700::1111',
  ])('allows the public address %s', (address) => {
    expect(privateAddressKind(address)).toBeUndefined();
  });

  it('reads a URL hostname as the address it names', () => {
    expect(unbracketed(new URL('http://[::ffff:127.0.0.1]:8080/x').hostname)).toBe('::ffff:7f00:1');
    expect(privateAddressKind(unbracketed(new URL('http://[::ffff:127.0.0.1]/').hostname))).toBe('loopback');
    // WHATWG URLs normalise the other spellings of an IPv4 address, so they are classified like it.
    expect(privateAddressKind(unbracketed(new URL('http://2130706433/').hostname))).toBe('loopback');
    expect(privateAddressKind(unbracketed(new URL('http://0x7f.1/').hostname))).toBe('loopback');
    expect(unbracketed('example.com')).toBe('example.com');
  });
});
