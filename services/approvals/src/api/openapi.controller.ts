import { Controller, Get } from '@nestjs/common';
import { API_ROUTES } from './api-routes.js';
import { openApiDocument } from './openapi.js';

/** `GET /openapi.json`: the API's document, made once from the route table. Public: it describes, it holds no data. */
@Controller()
export class OpenApiController {
  private readonly document = openApiDocument(API_ROUTES);

  @Get('openapi.json')
  get(): Record<string, unknown> {
    return this.document;
  }
}
