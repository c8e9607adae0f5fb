export {
  classifyRisk,
  FOREGROUND_PACKAGE_FIX,
  MAX_REASON_LENGTH,
  MAX_FOLDED_TARGET_TEXT_LENGTH,
  MAX_REASONS,
  MAX_TARGET_TEXT_LENGTH,
  RiskClassifier,
  type RiskClassifierOptions,
  type RiskInput,
  type RiskLevel,
  type RiskVerdict,
} from './risk-classifier.js';
export {
  classifyLine,
  classifyLines,
  parseRiskInput,
  type InputEffect,
  type LineContext,
  type LineErrorCode,
  type LineResult,
  type ToolCheck,
} from './classify-lines.js';
export {
  cyrillicSkeleton,
  findDisguises,
  hasVisibleText,
  latinSkeleton,
  normalizeForMatching,
  segmentWords,
  visualOrder,
  type Disguise,
} from './normalize.js';
export {
  HIGH_RISK_CONCEPTS,
  LANGUAGES,
  READ_ONLY_NEIGHBOURS,
  READ_ONLY_PHRASES,
  type ConceptId,
  type HighRiskConcept,
  type LanguageCode,
  type LanguageInfo,
} from './lexicon.js';
export {
  PAYMENT_APPS,
  PAYMENT_PACKAGE_WORDS,
  SYSTEM_CONTROL_APPS,
  type FinanceApp,
  type KnownApp,
} from './foreground-apps.js';
export { financialScreenEvidence } from './financial-screen.js';
export { INFORMATION_PAGES, SCREEN_ACTION_TOOLS, SETTINGS_APPS } from './system-actions.js';
export {
  canonicalPackage,
  MAX_TENANT_APPS,
  TenantAppLists,
  tenantAppListProblems,
  type TenantAppListsV1,
  type TenantAppVerdict,
} from './tenant-apps.js';
export type { ExtraHighRiskWords, WordMatch } from './word-matcher.js';
export { coverageTable, lexiconCoverage, type LanguageCoverage, type LexiconCoverage } from './coverage.js';
export { explainText, type WordExplanation } from './explain.js';
