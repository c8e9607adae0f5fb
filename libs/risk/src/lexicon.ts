/**
 * The high-risk lexicon: what target text has to mean for a screen action to need its owner's approval. Data only;
 * `word-matcher.ts` compiles it once at module load.
 *
 * How to read and extend it:
 *
 * - One entry per concept, with its words per language. A word may be several words (`place order`, `satın al`,
 *   `确认付款`); it matches only whole words of the target text, in order, after normalisation (NFKC, lower case,
 *   diacritics stripped from Latin, Greek and Cyrillic; see `normalize.ts`), so write words in their ordinary
 *   spelling with their accents. Chinese, Japanese, Thai and Korean words also match when the text is segmented
 *   into smaller pieces or written with or without spaces (`卸载` = `卸` + `载`; `구독 취소` = `구독취소`).
 * - Matching is by word, never by substring, so inflected forms are listed one by one: list the imperative and the
 *   infinitive a button uses (`Senden`, `Absenden`; `Отправить`, `Отправьте`; `보내기`, `전송`). Do not list
 *   participles and agent nouns (`sent`, `deleted`, `sender`, `Gesendet`, `Отправитель`): a folder called
 *   `Deleted items`, a `Sender` field or a `Sent` status names a state, not an action, and stays low.
 * - Avoid words that mean something harmless in another listed language once accents are stripped (Turkish `öde`
 *   reads as English `ode`, Portuguese `doe` as `doe`): use a longer phrase instead (`şimdi öde`).
 * - Vietnamese keeps its diacritics when matched: its tones tell words apart (`mua` buy, `mùa` season).
 * - {@link READ_ONLY_PHRASES} lists phrases that contain a listed word but name a read, a field or a status
 *   (`order history`, `sign in`, `người gửi`); a match wholly inside one is not high. {@link READ_ONLY_NEIGHBOURS}
 *   does the same for whole classes of compounds, by the word right before or after the match (Japanese `送信済み`
 *   "sent", Chinese `已发送` "sent", Thai `ผู้ส่ง` "sender").
 * - Add a language to {@link LANGUAGES} first; tests check every language has words for the core concepts and a
 *   near-miss table.
 *
 * Deliberately absent: English `OK`, `Yes`, `Continue`, `Next`, `Cancel`, `Accept`, `Allow`, `Clear`, `Call`. They
 * appear on almost every dialog, and without the dialog's text they say nothing about what happens. Korean `확인`,
 * Hebrew `אישור` and Chinese/Japanese `確認` literally mean "confirm" and are listed, so their dialogs are stricter.
 */

/** Languages of the lexicon (BCP 47 tags). */
export type LanguageCode =
  | 'en'
  | 'fr'
  | 'de'
  | 'es'
  | 'pt'
  | 'it'
  | 'nl'
  | 'pl'
  | 'tr'
  | 'id'
  | 'vi'
  | 'ru'
  | 'uk'
  | 'el'
  | 'ar'
  | 'he'
  | 'hi'
  | 'th'
  | 'ko'
  | 'ja'
  | 'zh-Hans'
  | 'zh-Hant';

/** A language's display name, its script, and whether its diacritics are kept when matching. */
export interface LanguageInfo {
  readonly name: string;
  readonly script:
    'Latin' | 'Cyrillic' | 'Greek' | 'Arabic' | 'Hebrew' | 'Devanagari' | 'Thai' | 'Hangul' | 'Kana and Han' | 'Han';
  /** Match with diacritics kept (tones that tell words apart); otherwise Latin/Greek/Cyrillic marks are stripped. */
  readonly keepMarks?: boolean;
}

/** The languages, in the order reasons list them. */
export const LANGUAGES: Readonly<Record<LanguageCode, LanguageInfo>> = {
  en: { name: 'English', script: 'Latin' },
  fr: { name: 'French', script: 'Latin' },
  de: { name: 'German', script: 'Latin' },
  es: { name: 'Spanish', script: 'Latin' },
  pt: { name: 'Portuguese', script: 'Latin' },
  it: { name: 'Italian', script: 'Latin' },
  nl: { name: 'Dutch', script: 'Latin' },
  pl: { name: 'Polish', script: 'Latin' },
  tr: { name: 'Turkish', script: 'Latin' },
  id: { name: 'Indonesian', script: 'Latin' },
  vi: { name: 'Vietnamese', script: 'Latin', keepMarks: true },
  ru: { name: 'Russian', script: 'Cyrillic' },
  uk: { name: 'Ukrainian', script: 'Cyrillic' },
  el: { name: 'Greek', script: 'Greek' },
  ar: { name: 'Arabic', script: 'Arabic' },
  he: { name: 'Hebrew', script: 'Hebrew' },
  hi: { name: 'Hindi', script: 'Devanagari' },
  th: { name: 'Thai', script: 'Thai' },
  ko: { name: 'Korean', script: 'Hangul' },
  ja: { name: 'Japanese', script: 'Kana and Han' },
  'zh-Hans': { name: 'Chinese (Simplified)', script: 'Han' },
  'zh-Hant': { name: 'Chinese (Traditional)', script: 'Han' },
};

/** Identifiers of the high-risk concepts. */
export type ConceptId =
  | 'send'
  | 'pay'
  | 'confirm'
  | 'delete'
  | 'publish'
  | 'buy'
  | 'transfer'
  | 'subscribe'
  | 'unsubscribe'
  | 'install'
  | 'reset'
  | 'share'
  | 'sign'
  | 'authorize'
  | 'withdraw'
  | 'donate'
  | 'book'
  | 'power';

/** Words per language for one concept. */
export type WordsByLanguage = Readonly<Partial<Record<LanguageCode, readonly string[]>>>;

/** One high-risk concept: what it means (used in reasons) and its words per language. */
export interface HighRiskConcept {
  readonly id: ConceptId;
  /** What the words mean, as reasons say it: `target text means <meaning>: "…" (French)`. */
  readonly meaning: string;
  readonly words: WordsByLanguage;
}

/** The concepts that make target text high risk. */
export const HIGH_RISK_CONCEPTS: readonly HighRiskConcept[] = [
  {
    id: 'send',
    meaning: 'send',
    words: {
      en: ['send', 'resend', 'submit'],
      fr: ['envoyer', 'envoie', 'envoyez', 'renvoyer', 'soumettre'],
      de: ['senden', 'sende', 'absenden', 'abschicken', 'schicken', 'versenden', 'einreichen'],
      es: ['enviar', 'envía', 'envíe', 'mandar', 'reenviar'],
      pt: ['enviar', 'envie', 'envia', 'mandar', 'reenviar', 'submeter'],
      it: ['invia', 'inviare', 'invio', 'spedisci', 'inoltra'],
      nl: ['verzenden', 'verzend', 'versturen', 'verstuur', 'sturen', 'indienen'],
      pl: ['wyślij', 'wysłać', 'prześlij', 'przesłać'],
      tr: ['gönder', 'gönderin', 'yolla'],
      id: ['kirim', 'kirimkan'],
      vi: ['gửi', 'gửi đi'],
      ru: ['отправить', 'отправь', 'отправьте', 'послать', 'переслать'],
      uk: ['надіслати', 'надішліть', 'відправити', 'відправте'],
      el: ['αποστολή', 'στείλε', 'στείλτε', 'αποστείλετε', 'υποβολή'],
      ar: ['إرسال', 'أرسل'],
      he: ['שלח', 'שלחי', 'שלחו', 'שליחה'],
      hi: ['भेजें', 'भेजो', 'भेजिए', 'सबमिट करें'],
      th: ['ส่ง'],
      ko: ['보내기', '보내', '보내요', '보내세요', '전송', '전송하기', '발송', '제출', '제출하기'],
      ja: ['送信', '送る', '提出'],
      'zh-Hans': ['发送', '提交'],
      'zh-Hant': ['發送', '傳送', '送出', '提交'],
    },
  },
  {
    id: 'pay',
    meaning: 'pay',
    words: {
      en: ['pay', 'make payment', 'make a payment'],
      fr: ['payer', 'payez', 'procéder au paiement', 'effectuer le paiement'],
      de: ['bezahlen', 'jetzt zahlen', 'zahlungspflichtig bestellen'],
      es: ['pagar', 'paga', 'pague'],
      pt: ['pagar', 'pague', 'efetuar pagamento'],
      it: ['paga', 'pagare'],
      nl: ['betalen', 'betaal'],
      pl: ['zapłać', 'zapłacić', 'opłać', 'opłacić'],
      tr: ['şimdi öde', 'ödeme yap', 'ödemeyi tamamla'],
      id: ['bayar', 'bayarkan'],
      vi: ['thanh toán'],
      ru: ['оплатить', 'оплатите', 'заплатить', 'заплатите'],
      uk: ['оплатити', 'оплатіть', 'сплатити', 'сплатіть', 'заплатити'],
      el: ['πληρωμή', 'πληρώστε', 'πλήρωσε'],
      ar: ['ادفع', 'دفع', 'سدد'],
      he: ['לתשלום', 'שלם עכשיו', 'בצע תשלום'],
      hi: ['भुगतान करें', 'पे करें'],
      th: ['ชำระเงิน', 'ชำระ', 'จ่ายเงิน'],
      ko: ['결제', '결제하기', '지불', '지불하기'],
      ja: ['支払う', '支払い', 'お支払い', '決済', '払う'],
      'zh-Hans': ['付款', '支付', '买单'],
      'zh-Hant': ['付款', '支付', '買單'],
    },
  },
  {
    id: 'confirm',
    meaning: 'confirm',
    words: {
      en: ['confirm'],
      fr: ['confirmer', 'confirmez', 'valider', 'validez'],
      de: ['bestätigen', 'bestätige'],
      es: ['confirmar', 'confirma', 'confirme'],
      pt: ['confirmar', 'confirme', 'confirma'],
      it: ['conferma', 'confermare'],
      nl: ['bevestigen', 'bevestig'],
      pl: ['potwierdź', 'potwierdzić'],
      tr: ['onayla', 'onaylayın'],
      id: ['konfirmasi', 'konfirmasikan'],
      vi: ['xác nhận'],
      ru: ['подтвердить', 'подтвердите', 'подтверди'],
      uk: ['підтвердити', 'підтвердіть'],
      el: ['επιβεβαίωση', 'επιβεβαιώστε', 'επιβεβαίωσε'],
      ar: ['تأكيد', 'أكد'],
      he: ['אישור', 'אשרו'],
      hi: ['पुष्टि करें', 'कन्फर्म करें'],
      th: ['ยืนยัน'],
      ko: ['확인', '확인하기'],
      ja: ['確認', '確定'],
      'zh-Hans': ['确认'],
      'zh-Hant': ['確認'],
    },
  },
  {
    id: 'delete',
    meaning: 'delete or remove',
    words: {
      en: ['delete', 'remove', 'erase'],
      fr: ['supprimer', 'supprimez', 'effacer', 'retirer', 'enlever'],
      de: ['löschen', 'lösche', 'entfernen', 'entferne'],
      es: ['eliminar', 'elimina', 'elimine', 'borrar', 'borra', 'quitar'],
      pt: ['excluir', 'exclua', 'apagar', 'apague', 'eliminar', 'remover', 'remova'],
      it: ['elimina', 'eliminare', 'cancella', 'cancellare', 'rimuovi', 'rimuovere'],
      nl: ['verwijderen', 'verwijder', 'wissen', 'wis'],
      pl: ['usuń', 'usunąć', 'skasuj', 'wymaż'],
      tr: ['sil', 'silin', 'kaldır'],
      id: ['hapus'],
      vi: ['xóa', 'xoá', 'gỡ bỏ'],
      ru: ['удалить', 'удали', 'удалите', 'стереть'],
      uk: ['видалити', 'видаліть', 'стерти'],
      el: ['διαγραφή', 'διαγράψτε', 'διάγραψε', 'αφαίρεση'],
      ar: ['حذف', 'احذف', 'إزالة', 'مسح البيانات', 'مسح الكل'],
      he: ['מחק', 'מחיקה', 'הסר', 'הסרה'],
      hi: ['हटाएं', 'हटाएँ', 'मिटाएं', 'डिलीट करें'],
      th: ['ลบ'],
      ko: ['삭제', '삭제하기', '지우기', '제거'],
      ja: ['削除', '消去'],
      'zh-Hans': ['删除', '移除'],
      'zh-Hant': ['刪除', '移除'],
    },
  },
  {
    id: 'publish',
    meaning: 'post or publish',
    words: {
      en: ['post', 'repost', 'publish', 'tweet'],
      fr: ['publier', 'publiez', 'poster'],
      de: ['posten', 'veröffentlichen'],
      es: ['publicar', 'publica'],
      pt: ['publicar', 'postar', 'publique'],
      it: ['pubblica', 'pubblicare'],
      nl: ['publiceren', 'publiceer', 'posten', 'bericht plaatsen'],
      pl: ['opublikuj', 'opublikować', 'publikuj'],
      tr: ['yayınla', 'gönderi paylaş'],
      id: ['posting', 'terbitkan', 'unggah'],
      vi: ['đăng bài', 'đăng tin', 'đăng ngay', 'xuất bản'],
      ru: ['опубликовать', 'опубликуйте', 'опубликуй'],
      uk: ['опублікувати', 'опублікуйте'],
      el: ['δημοσίευση', 'δημοσιεύστε', 'δημοσίευσε'],
      ar: ['نشر', 'انشر'],
      he: ['פרסם', 'פרסום', 'פרסמו'],
      hi: ['पोस्ट करें', 'प्रकाशित करें'],
      th: ['โพสต์', 'เผยแพร่'],
      ko: ['게시', '게시하기', '올리기', '발행'],
      ja: ['投稿', '公開'],
      'zh-Hans': ['发布', '发表', '发帖'],
      'zh-Hant': ['發佈', '發布', '發表', '發文'],
    },
  },
  {
    id: 'buy',
    meaning: 'buy or order',
    words: {
      en: ['buy', 'purchase', 'checkout', 'check out', 'order', 'place order'],
      fr: ['acheter', 'achetez', 'commander', 'commandez', 'passer la commande', 'passer commande'],
      de: ['kaufen', 'jetzt kaufen', 'bestellen', 'bestelle', 'erwerben'],
      es: ['comprar', 'compre', 'pedir ahora', 'hacer pedido', 'realizar pedido', 'finalizar compra'],
      pt: ['comprar', 'compre', 'finalizar compra', 'fazer pedido', 'encomendar'],
      it: ['acquista', 'acquistare', 'compra', 'comprare', 'ordina', 'ordinare'],
      nl: ['kopen', 'koop', 'bestellen', 'bestel', 'afrekenen', 'bestelling plaatsen'],
      pl: ['kup', 'kupić', 'kupuję', 'zamów', 'zamówić'],
      tr: ['satın al', 'satın alın', 'sipariş ver', 'siparişi tamamla'],
      id: ['beli', 'beli sekarang', 'pesan sekarang', 'checkout'],
      vi: ['mua', 'mua ngay', 'mua hàng', 'đặt hàng', 'đặt mua'],
      ru: ['купить', 'купите', 'заказать', 'закажите', 'оформить заказ'],
      uk: ['купити', 'придбати', 'замовити', 'оформити замовлення'],
      el: ['αγορά', 'αγοράστε', 'αγόρασε', 'ολοκλήρωση παραγγελίας'],
      ar: ['شراء', 'اشتر', 'اطلب الآن'],
      he: ['קנה', 'קנייה', 'רכישה', 'לרכישה', 'הזמן עכשיו', 'להזמנה'],
      hi: ['खरीदें', 'ऑर्डर करें'],
      th: ['ซื้อ', 'สั่งซื้อ'],
      ko: ['구매', '구매하기', '구입', '주문', '주문하기'],
      ja: ['購入', '買う', '注文'],
      'zh-Hans': ['购买', '下单', '结算', '提交订单'],
      'zh-Hant': ['購買', '下單', '結帳', '結算'],
    },
  },
  {
    id: 'transfer',
    meaning: 'transfer money',
    words: {
      en: ['transfer', 'send money', 'wire transfer'],
      fr: ['virement', 'transférer', 'faire un virement'],
      de: ['überweisen', 'überweisung', 'geld senden'],
      es: ['transferir', 'transfiere', 'transferencia'],
      pt: ['transferir', 'transfira', 'transferência'],
      it: ['trasferisci', 'trasferire', 'bonifico'],
      nl: ['overmaken', 'overboeken', 'overschrijven'],
      pl: ['przelew', 'przelej', 'przelać'],
      tr: ['havale', 'transfer', 'para gönder'],
      id: ['transfer', 'kirim uang'],
      vi: ['chuyển tiền', 'chuyển khoản'],
      ru: ['перевести', 'переведите', 'перевод'],
      uk: ['переказ', 'переказати', 'переказати кошти'],
      el: ['μεταφορά', 'μεταφορά χρημάτων', 'έμβασμα'],
      ar: ['تحويل', 'تحويل الأموال'],
      he: ['העברה', 'העבר', 'העברת כסף'],
      hi: ['ट्रांसफर करें', 'पैसे भेजें'],
      th: ['โอน', 'โอนเงิน'],
      ko: ['송금', '송금하기', '이체', '이체하기'],
      ja: ['送金', '振込', '振り込む', '振替'],
      'zh-Hans': ['转账', '汇款'],
      'zh-Hant': ['轉帳', '轉賬', '匯款'],
    },
  },
  {
    id: 'subscribe',
    meaning: 'subscribe',
    words: {
      en: ['subscribe', 'sign up', 'start free trial'],
      fr: ['abonner', 'abonnez', 'inscrire'],
      de: ['abonnieren', 'abonniere'],
      es: ['suscribirse', 'suscribirme', 'suscríbete', 'suscribir'],
      pt: ['assinar', 'assine', 'inscrever', 'inscreva'],
      it: ['iscriviti', 'abbonati', 'abbonarsi'],
      nl: ['abonneren', 'abonneer'],
      pl: ['subskrybuj', 'zasubskrybuj'],
      tr: ['abone ol'],
      id: ['langganan', 'berlangganan'],
      vi: ['đăng ký', 'đăng kí'],
      ru: ['подписаться', 'подпишитесь', 'оформить подписку'],
      uk: ['підписатися', 'підпишіться', 'оформити підписку'],
      el: ['εγγραφείτε', 'γίνετε συνδρομητής'],
      ar: ['اشترك'],
      he: ['הירשם', 'הירשמו', 'הרשמה'],
      hi: ['सब्सक्राइब करें', 'सदस्यता लें'],
      th: ['สมัครสมาชิก'],
      ko: ['구독', '구독하기'],
      ja: ['購読', 'チャンネル登録'],
      'zh-Hans': ['订阅'],
      'zh-Hant': ['訂閱'],
    },
  },
  {
    id: 'unsubscribe',
    meaning: 'unsubscribe',
    words: {
      en: ['unsubscribe', 'cancel subscription'],
      fr: ['désabonner', 'désinscrire', 'résilier'],
      de: ['abbestellen', 'kündigen'],
      es: ['darse de baja', 'cancelar suscripción'],
      pt: ['cancelar assinatura', 'cancelar inscrição'],
      it: ['annulla iscrizione', 'disiscriviti', 'annulla abbonamento'],
      nl: ['uitschrijven', 'opzeggen', 'abonnement opzeggen'],
      pl: ['anuluj subskrypcję', 'wypisz'],
      tr: ['abonelikten çık', 'aboneliği iptal et'],
      id: ['berhenti berlangganan'],
      vi: ['hủy đăng ký'],
      ru: ['отписаться', 'отменить подписку'],
      uk: ['відписатися', 'скасувати підписку'],
      el: ['κατάργηση εγγραφής'],
      ar: ['إلغاء الاشتراك'],
      he: ['ביטול מנוי', 'בטל מנוי'],
      hi: ['सदस्यता रद्द करें', 'अनसब्सक्राइब करें'],
      th: ['ยกเลิกการสมัครสมาชิก', 'ยกเลิกสมาชิก'],
      ko: ['구독 취소', '구독 해지'],
      ja: ['購読解除', '登録解除', '解約'],
      'zh-Hans': ['取消订阅', '退订'],
      'zh-Hant': ['取消訂閱', '退訂'],
    },
  },
  {
    id: 'install',
    meaning: 'install or uninstall apps',
    words: {
      en: ['install', 'uninstall', 'reinstall'],
      fr: ['installer', 'désinstaller'],
      de: ['installieren', 'deinstallieren'],
      es: ['instalar', 'desinstalar'],
      pt: ['instalar', 'desinstalar'],
      it: ['installa', 'installare', 'disinstalla', 'disinstallare'],
      nl: ['installeren', 'installeer'],
      pl: ['zainstaluj', 'instaluj', 'odinstaluj'],
      tr: ['yükle', 'uygulamayı kaldır'],
      id: ['pasang', 'instal', 'copot pemasangan'],
      vi: ['gỡ cài đặt'],
      ru: ['установить', 'установите', 'переустановить'],
      uk: ['встановити', 'встановіть', 'інсталювати'],
      el: ['εγκατάσταση', 'απεγκατάσταση'],
      ar: ['تثبيت التطبيق', 'إلغاء التثبيت'],
      he: ['התקנה', 'התקן עכשיו', 'הסר התקנה'],
      hi: ['इंस्टॉल करें', 'अनइंस्टॉल करें'],
      th: ['ติดตั้ง', 'ถอนการติดตั้ง'],
      ko: ['설치', '설치하기'],
      ja: ['インストール', 'アンインストール'],
      'zh-Hans': ['安装', '卸载'],
      'zh-Hant': ['安裝', '解除安裝'],
    },
  },
  {
    id: 'reset',
    meaning: 'reset or wipe',
    words: {
      en: ['reset', 'factory reset', 'wipe'],
      fr: ['réinitialiser'],
      de: ['zurücksetzen'],
      es: ['restablecer'],
      pt: ['redefinir', 'restaurar'],
      it: ['reimposta', 'ripristina'],
      nl: ['resetten', 'fabrieksinstellingen herstellen'],
      pl: ['resetuj', 'zresetuj'],
      tr: ['sıfırla'],
      id: ['reset', 'setel ulang'],
      vi: ['đặt lại', 'khôi phục'],
      ru: ['сбросить', 'сброс'],
      uk: ['скинути', 'скидання'],
      el: ['επαναφορά'],
      ar: ['إعادة تعيين', 'إعادة الضبط'],
      he: ['איפוס'],
      hi: ['रीसेट करें'],
      th: ['รีเซ็ต'],
      ko: ['초기화', '재설정'],
      ja: ['リセット', '初期化'],
      'zh-Hans': ['重置', '恢复出厂设置'],
      'zh-Hant': ['重設', '重置', '恢復原廠設定'],
    },
  },
  {
    id: 'share',
    meaning: 'share',
    words: {
      en: ['share'],
      fr: ['partager', 'partagez'],
      de: ['teilen'],
      es: ['compartir', 'comparte'],
      pt: ['compartilhar', 'compartilhe', 'partilhar'],
      it: ['condividi', 'condividere'],
      nl: ['delen'],
      pl: ['udostępnij', 'udostępnić'],
      tr: ['paylaş'],
      id: ['bagikan'],
      vi: ['chia sẻ'],
      ru: ['поделиться'],
      uk: ['поділитися'],
      el: ['κοινοποίηση', 'μοιραστείτε'],
      ar: ['مشاركة', 'شارك'],
      he: ['שתף', 'שיתוף'],
      hi: ['साझा करें', 'शेयर करें'],
      th: ['แชร์'],
      ko: ['공유', '공유하기'],
      ja: ['共有', 'シェア'],
      'zh-Hans': ['分享', '共享'],
      'zh-Hant': ['分享', '共用'],
    },
  },
  {
    id: 'sign',
    meaning: 'sign',
    words: {
      en: ['sign'],
      fr: ['signer', 'signez'],
      de: ['unterschreiben', 'unterzeichnen', 'signieren'],
      es: ['firmar'],
      pt: ['assinar', 'assine'],
      it: ['firmare'],
      nl: ['ondertekenen', 'onderteken'],
      pl: ['podpisz', 'podpisać'],
      tr: ['imzala'],
      id: ['tanda tangani', 'tandatangani'],
      vi: ['ký', 'ký tên'],
      ru: ['подписать', 'подпишите'],
      uk: ['підписати', 'підпишіть'],
      el: ['υπογραφή', 'υπογράψτε'],
      ar: ['توقيع'],
      he: ['חתום', 'חתימה'],
      hi: ['हस्ताक्षर करें'],
      th: ['ลงนาม', 'เซ็น'],
      ko: ['서명', '서명하기'],
      ja: ['署名', 'サイン'],
      'zh-Hans': ['签署', '签名'],
      'zh-Hant': ['簽署', '簽名'],
    },
  },
  {
    id: 'authorize',
    meaning: 'authorize or approve',
    words: {
      en: ['authorize', 'authorise', 'approve', 'grant access'],
      fr: ['autoriser', 'approuver'],
      de: ['autorisieren', 'genehmigen', 'freigeben'],
      es: ['autorizar', 'aprobar'],
      pt: ['autorizar', 'aprovar'],
      it: ['autorizza', 'autorizzare', 'approva', 'approvare'],
      nl: ['autoriseren', 'goedkeuren'],
      pl: ['autoryzuj', 'zatwierdź', 'zatwierdzić'],
      tr: ['yetkilendir'],
      id: ['otorisasi', 'setujui'],
      vi: ['phê duyệt', 'ủy quyền'],
      ru: ['авторизовать', 'одобрить'],
      uk: ['авторизувати', 'схвалити'],
      el: ['έγκριση', 'εξουσιοδότηση'],
      ar: ['موافقة', 'تفويض'],
      he: ['אשר תשלום', 'הרשאה'],
      hi: ['स्वीकृत करें', 'अधिकृत करें'],
      th: ['อนุมัติ'],
      ko: ['승인', '승인하기'],
      ja: ['承認'],
      'zh-Hans': ['授权', '批准'],
      'zh-Hant': ['授權', '批准', '核准'],
    },
  },
  {
    id: 'withdraw',
    meaning: 'withdraw money',
    words: {
      en: ['withdraw', 'cash out'],
      fr: ['retrait'],
      de: ['abheben', 'auszahlen', 'auszahlung'],
      es: ['retirar'],
      pt: ['sacar dinheiro', 'fazer saque'],
      it: ['preleva', 'prelevare', 'prelievo'],
      nl: ['geld opnemen', 'uitbetalen'],
      pl: ['wypłać', 'wypłacić', 'wypłata'],
      tr: ['para çek'],
      id: ['tarik tunai', 'tarik dana', 'tarik saldo'],
      vi: ['rút tiền'],
      ru: ['вывести средства', 'вывести деньги', 'снять деньги'],
      uk: ['вивести кошти', 'зняти кошти'],
      el: ['ανάληψη'],
      ar: ['سحب الأموال', 'سحب نقدي'],
      he: ['משיכה', 'משוך כסף'],
      hi: ['पैसे निकालें', 'निकासी'],
      th: ['ถอนเงิน'],
      ko: ['출금', '출금하기', '인출'],
      ja: ['出金', '引き出す'],
      'zh-Hans': ['提现', '取款'],
      'zh-Hant': ['提領', '提款', '提現'],
    },
  },
  {
    id: 'donate',
    meaning: 'donate',
    words: {
      en: ['donate'],
      fr: ['faire un don'],
      de: ['spenden'],
      es: ['donar'],
      pt: ['doar', 'doe agora'],
      it: ['donare'],
      nl: ['doneren', 'doneer'],
      pl: ['wesprzyj', 'przekaż darowiznę'],
      tr: ['bağış yap', 'bağışla'],
      id: ['donasi'],
      vi: ['quyên góp', 'ủng hộ'],
      ru: ['пожертвовать'],
      uk: ['пожертвувати', 'задонатити'],
      el: ['δωρεά'],
      ar: ['تبرع'],
      he: ['תרום', 'תרומה'],
      hi: ['दान करें'],
      th: ['บริจาค'],
      ko: ['기부', '기부하기', '후원하기'],
      ja: ['寄付'],
      'zh-Hans': ['捐款', '捐赠'],
      'zh-Hant': ['捐款', '捐贈'],
    },
  },
  {
    id: 'book',
    meaning: 'book or reserve',
    words: {
      en: ['book', 'book now', 'reserve'],
      fr: ['réserver'],
      de: ['buchen', 'reservieren'],
      es: ['reservar'],
      pt: ['reservar'],
      it: ['prenota', 'prenotare'],
      nl: ['nu boeken', 'reserveren'],
      pl: ['zarezerwuj', 'rezerwuj'],
      tr: ['rezervasyon yap', 'rezerve et'],
      id: ['reservasi'],
      vi: ['đặt chỗ', 'đặt phòng', 'đặt vé'],
      ru: ['забронировать'],
      uk: ['забронювати'],
      el: ['κράτηση'],
      ar: ['احجز', 'حجز'],
      he: ['הזמן'],
      hi: ['बुक करें'],
      th: ['จอง'],
      ko: ['예약', '예약하기'],
      ja: ['予約'],
      'zh-Hans': ['预订', '预约'],
      'zh-Hant': ['預訂', '預約'],
    },
  },
  {
    id: 'power',
    meaning: 'power off or restart',
    words: {
      en: ['power off', 'shut down', 'restart', 'reboot'],
      fr: ['éteindre', 'redémarrer'],
      de: ['ausschalten', 'neu starten', 'neustarten'],
      es: ['apagar', 'reiniciar'],
      pt: ['desligar', 'reiniciar'],
      it: ['spegni', 'riavvia'],
      nl: ['uitschakelen', 'opnieuw opstarten'],
      pl: ['wyłącz', 'uruchom ponownie'],
      tr: ['yeniden başlat', 'cihazı kapat'],
      id: ['matikan', 'mulai ulang'],
      vi: ['tắt nguồn', 'khởi động lại'],
      ru: ['выключить', 'перезагрузить'],
      uk: ['вимкнути', 'перезавантажити'],
      el: ['απενεργοποίηση', 'επανεκκίνηση'],
      ar: ['إيقاف التشغيل', 'إعادة التشغيل'],
      he: ['כיבוי', 'הפעלה מחדש'],
      hi: ['पावर ऑफ', 'रीस्टार्ट करें'],
      th: ['ปิดเครื่อง', 'รีสตาร์ท'],
      ko: ['전원 끄기', '다시 시작', '재시작'],
      ja: ['電源を切る', '再起動'],
      'zh-Hans': ['关机', '重启', '重新启动'],
      'zh-Hant': ['關機', '重新啟動'],
    },
  },
];

/**
 * Phrases that contain a listed word but name a read, a field, a folder or a status. A match that lies wholly inside
 * one of them is not high (`Transfer history`, `Sign in`, `Numero di conferma`).
 */
export const READ_ONLY_PHRASES: WordsByLanguage = {
  en: [
    'sign in',
    'sign out',
    'order history',
    'order status',
    'order details',
    'order number',
    'sort order',
    'transfer history',
    'transfer details',
    'transfer status',
    'address book',
    'phone book',
    'e book',
    'post office',
    'post code',
    'blog post',
    'pay slip',
    'pay stub',
    'share price',
  ],
  it: ['numero di conferma', 'codice di conferma', 'conferma d ordine'],
  id: ['kode konfirmasi', 'nomor konfirmasi', 'riwayat transfer'],
  vi: ['người gửi', 'đã gửi', 'lịch sử thanh toán', 'phương thức thanh toán', 'mã xác nhận', 'đã xóa', 'đã xoá'],
  he: ['מספר אישור', 'קוד אישור'],
  th: ['รหัสยืนยัน'],
  'zh-Hans': ['付款记录', '支付记录', '转账记录', '购买记录', '订阅号'],
  'zh-Hant': ['付款記錄', '支付記錄', '轉帳記錄', '購買記錄'],
};

/** Words right before or after a match that turn it into a noun, a status or a history (see READ_ONLY_NEIGHBOURS). */
export interface ReadOnlyNeighbours {
  readonly before?: readonly string[];
  readonly after?: readonly string[];
}

// Chinese and Japanese share Han characters, so one list serves the three: a suffix after a listed word makes a noun
// (者 -er, 人 person, 先 destination, 元 origin, 番号/号码 number, 方法/方式 method, 日時/时间 time), a status (済み
// done, 中 in progress, 完了/成功/失败) or a record (履歴); 已 "already" and 未 "not yet" before it make a status.
// Chinese 记录/历史 are left out on purpose: `删除记录` is "delete the records", an action.
const CJK_NEIGHBOURS: ReadOnlyNeighbours = {
  before: ['已', '未'],
  after: [
    '者',
    '人',
    '先',
    '元',
    '済み',
    '済',
    '中',
    '完了',
    '成功',
    '失败',
    '失敗',
    '番号',
    '号码',
    '號碼',
    '编号',
    '編號',
    '方法',
    '方式',
    '日時',
    '时间',
    '時間',
    '状态',
    '狀態',
    '状況',
    '一覧',
    '履歴',
    '画面',
  ],
};

/**
 * Per language, single words right before or after a match that make it a read rather than an action: Japanese
 * `送信済み` "sent", Chinese `已发送` "sent", Thai `ผู้ส่ง` "sender", Korean `결제 내역` "payment history". Only the
 * match's own language's list applies, so a word shared with another language (Indonesian `transfer`) needs a
 * {@link READ_ONLY_PHRASES} entry instead (`riwayat transfer`).
 */
export const READ_ONLY_NEIGHBOURS: Readonly<Partial<Record<LanguageCode, ReadOnlyNeighbours>>> = {
  th: { before: ['ผู้', 'การ'], after: ['แล้ว', 'สำเร็จ'] },
  ko: { after: ['내역', '번호', '수단', '완료', '목록', '기록', '상태'] },
  ja: CJK_NEIGHBOURS,
  'zh-Hans': CJK_NEIGHBOURS,
  'zh-Hant': CJK_NEIGHBOURS,
};
