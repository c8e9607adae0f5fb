/**
 * The extensions Ormuz ships, and the designer configuration they need to load.
 */
import { Catalog } from '../catalog.js';
import type { ExtensionManifest } from '../manifest.js';
import type { DesignerConfig } from '../tool-definition.js';
import { CORE_EXTENSION } from './core.extension.js';
import { DEVICE_EXTENSION } from './device.extension.js';

/** Every shipped non-core extension. */
export const SHIPPED_EXTENSIONS: readonly ExtensionManifest[] = [DEVICE_EXTENSION];

/** Default values of the shipped tools' designer parameters; a deployment may replace them. */
export const DEFAULT_DESIGNER_CONFIG: DesignerConfig = {
  'ormuz.read_more': { max_result_chars: 4000 },
};

/** The shipped catalog: core plus {@link SHIPPED_EXTENSIONS}, with `designer` or the defaults. */
export function loadShippedCatalog(designer: DesignerConfig = DEFAULT_DESIGNER_CONFIG): Catalog {
  return Catalog.load(SHIPPED_EXTENSIONS, { core: CORE_EXTENSION, designer });
}
