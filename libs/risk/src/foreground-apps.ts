/**
 * Foreground apps that make every screen action high risk. Data only; `risk-classifier.ts` compiles it at load.
 *
 * A package is a payment, banking, wallet or exchange app when it is listed here (a listed package also covers the
 * packages under it: `com.bankofamerica` covers `com.bankofamerica.cashpromobile`), or when a word of its name is one
 * of {@link PAYMENT_PACKAGE_WORDS}. Words are whole: each dot-separated segment is split at underscores, digits and
 * lower-to-upper case changes, and a word must equal a listed one. So `com.example.bank` and
 * `jp.co.rakuten_bank.rakutenbank` match (`bank`), while `com.example.notebank` (`notebank`) and
 * `com.example.paystub_reader` (`paystub`, `reader`) do not: the pattern is a backstop for names that say what they
 * are, the curated list is the primary source (real banks often hide in compounds such as `com.usbank.mobilebanking`),
 * and a deployment adds its own with `extraHighRiskPackages`. Devices enforce their own denylist as well.
 */

/** A curated package and the app it belongs to (the app name appears in reasons). */
export interface KnownApp {
  readonly package: string;
  readonly app: string;
}

/** Payment, banking, wallet and exchange apps, by package name. */
export const PAYMENT_APPS: readonly KnownApp[] = [
  { package: 'com.example.bank', app: 'the simulator bank' },
  { package: 'com.paypal.android.p2pmobile', app: 'PayPal' },
  { package: 'com.paypal.merchant.client', app: 'PayPal Business' },
  { package: 'com.venmo', app: 'Venmo' },
  { package: 'com.squareup.cash', app: 'Cash App' },
  { package: 'com.zellepay.zelle', app: 'Zelle' },
  { package: 'com.google.android.apps.walletnfcrel', app: 'Google Wallet' },
  { package: 'com.google.android.apps.nbu.paisa.user', app: 'Google Pay (India)' },
  { package: 'com.samsung.android.spay', app: 'Samsung Wallet' },
  { package: 'com.revolut.revolut', app: 'Revolut' },
  { package: 'com.transferwise.android', app: 'Wise' },
  { package: 'de.number26.android', app: 'N26' },
  { package: 'co.uk.getmondo', app: 'Monzo' },
  { package: 'com.starlingbank.android', app: 'Starling Bank' },
  { package: 'com.klarna.android', app: 'Klarna' },
  { package: 'com.coinbase.android', app: 'Coinbase' },
  { package: 'com.binance.dev', app: 'Binance' },
  { package: 'com.wallet.crypto.trustapp', app: 'Trust Wallet' },
  { package: 'io.metamask', app: 'MetaMask' },
  { package: 'piuk.blockchain.android', app: 'Blockchain.com' },
  { package: 'com.robinhood.android', app: 'Robinhood' },
  { package: 'com.chase.sig.android', app: 'Chase' },
  { package: 'com.wf.wellsfargomobile', app: 'Wells Fargo' },
  { package: 'com.bankofamerica', app: 'Bank of America' },
  { package: 'com.infonow.bofa', app: 'Bank of America' },
  { package: 'com.citi.citimobile', app: 'Citi' },
  { package: 'com.konylabs.capitalone', app: 'Capital One' },
  { package: 'com.usbank.mobilebanking', app: 'U.S. Bank' },
  { package: 'com.usaa.mobile.android.usaa', app: 'USAA' },
  { package: 'com.americanexpress.android.acctsvcs.us', app: 'American Express' },
  { package: 'com.discoverfinancial.mobile', app: 'Discover' },
  { package: 'uk.co.hsbc.hsbcukmobilebanking', app: 'HSBC UK' },
  { package: 'com.barclays.android.barclaysmobilebanking', app: 'Barclays' },
  { package: 'com.nu.production', app: 'Nubank' },
  { package: 'com.mercadopago.wallet', app: 'Mercado Pago' },
  { package: 'com.phonepe.app', app: 'PhonePe' },
  { package: 'net.one97.paytm', app: 'Paytm' },
  { package: 'com.eg.android.alipaygphone', app: 'Alipay' },
  { package: 'jp.ne.paypay.android.app', app: 'PayPay' },
  { package: 'jp.co.rakuten_bank', app: 'Rakuten Bank' },
  { package: 'com.kakaobank.channel', app: 'KakaoBank' },
  { package: 'viva.republica.toss', app: 'Toss' },
];

/** Words of a package name that mark a payment, banking, wallet or exchange app (see the module comment). */
export const PAYMENT_PACKAGE_WORDS: readonly string[] = [
  'bank',
  'banks',
  'banking',
  'mbank',
  'mbanking',
  'ebank',
  'ebanking',
  'mobilebank',
  'mobilebanking',
  'netbanking',
  'onlinebanking',
  'wallet',
  'wallets',
  'ewallet',
  'pay',
  'payment',
  'payments',
  'crypto',
  'bitcoin',
  'exchange',
  'finance',
  'financial',
];

/**
 * System apps where a tap, a swipe or a key press changes a system setting, a permission or the installed apps
 * (Settings, the quick-settings shade, the package installer, the permission dialogs). Opening them is low; acting on
 * their screens is high. A listed package also covers the packages under it.
 */
export const SYSTEM_CONTROL_APPS: readonly KnownApp[] = [
  { package: 'com.android.settings', app: 'Settings' },
  { package: 'com.android.systemui', app: 'the system UI (quick settings)' },
  { package: 'com.android.packageinstaller', app: 'the package installer' },
  { package: 'com.google.android.packageinstaller', app: 'the package installer' },
  { package: 'com.android.permissioncontroller', app: 'the permission controller' },
  { package: 'com.google.android.permissioncontroller', app: 'the permission controller' },
];
