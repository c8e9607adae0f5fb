import { loadShippedCatalog, type Catalog } from '@ormuz/catalog';

/** Injection token of the loaded tool catalog (the shipped extensions with their designer configuration). */
export const CATALOG = Symbol('policy.catalog');

export const catalogProvider = { provide: CATALOG, useFactory: (): Catalog => loadShippedCatalog() };
