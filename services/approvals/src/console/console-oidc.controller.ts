import { Controller, Get } from '@nestjs/common';
import { ConsoleOidc } from './console-oidc.js';

/**
 * `GET /console/oidc/config`: how the console's sign-in page reaches the identity provider, or `{ "enabled": false }`
 * when only pasted tokens are offered. Public: the page reads it before anyone has signed in, and it holds nothing
 * secret (a public client has no secret).
 */
@Controller('console/oidc')
export class ConsoleOidcController {
  constructor(private readonly oidc: ConsoleOidc) {}

  @Get('config')
  async config() {
    const config = await this.oidc.pageConfig();
    return config ? { enabled: true, ...config } : { enabled: false };
  }
}
