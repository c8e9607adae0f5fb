// Both sides for every language: words a button uses for a high-risk action, and near-misses (agent nouns,
// participles, folder names, compounds, reads) that must stay low.
import { HIGH_RISK_CONCEPTS, LANGUAGES, type LanguageCode } from './lexicon.js';
import { classifyRisk } from './risk-classifier.js';

const tap = (target_text: string) =>
  classifyRisk({ tool: 'device.tap', args: {}, target_text, foreground_package: 'com.example.messages' });

interface LanguageTable {
  readonly high: readonly (readonly [text: string, meaning: string])[];
  readonly low: readonly string[];
}

const SEND = 'send';
const PAY = 'pay';
const CONFIRM = 'confirm';
const DELETE = 'delete or remove';
const POST = 'post or publish';
const BUY = 'buy or order';
const TRANSFER = 'transfer money';
const SUBSCRIBE = 'subscribe';
const UNSUBSCRIBE = 'unsubscribe';
const INSTALL = 'install or uninstall apps';
const RESET = 'reset or wipe';
const SHARE = 'share';

const TABLES: Record<LanguageCode, LanguageTable> = {
  en: {
    high: [
      ['Send', SEND],
      ['Pay now', PAY],
      ['Confirm', CONFIRM],
      ['Delete', DELETE],
      ['Post', POST],
      ['Buy now', BUY],
      ['Place order', BUY],
      ['Transfer', TRANSFER],
      ['Subscribe', SUBSCRIBE],
      ['Unsubscribe', UNSUBSCRIBE],
      ['Uninstall', INSTALL],
      ['Factory reset', RESET],
      ['Share', SHARE],
      ['Sign the contract', 'sign'],
      ['Approve', 'authorize or approve'],
      ['Withdraw', 'withdraw money'],
      ['Donate', 'donate'],
      ['Book now', 'book or reserve'],
      ['Power off', 'power off or restart'],
    ],
    low: [
      'Sender',
      'Postcode',
      'Repayment history',
      'Deleted items',
      'Confirmation number',
      'Sent',
      'Order history',
      'Transfer history',
      'Sign in',
      'Address book',
      'Payment methods',
      'PayPal',
      'Bookmarks',
      'Settings',
    ],
  },
  fr: {
    high: [
      ['Envoyer', SEND],
      ['Payer', PAY],
      ['Confirmer', CONFIRM],
      ['Supprimer', DELETE],
      ['Publier', POST],
      ['Passer la commande', BUY],
      ['Faire un virement', TRANSFER],
      ["S'abonner", SUBSCRIBE],
      ['Désinstaller', INSTALL],
      ['Réinitialiser', RESET],
      ['Partager', SHARE],
    ],
    low: [
      'Expéditeur',
      'Envoyé',
      'Moyens de paiement',
      'Numéro de confirmation',
      'Éléments supprimés',
      'Historique des virements',
    ],
  },
  de: {
    high: [
      ['Senden', SEND],
      ['Absenden', SEND],
      ['Jetzt bezahlen', PAY],
      ['Bestätigen', CONFIRM],
      ['Löschen', DELETE],
      ['Veröffentlichen', POST],
      ['Jetzt kaufen', BUY],
      ['Zahlungspflichtig bestellen', PAY],
      ['Überweisen', TRANSFER],
      ['Abonnieren', SUBSCRIBE],
      ['Deinstallieren', INSTALL],
      ['Zurücksetzen', RESET],
      ['Teilen', SHARE],
    ],
    low: ['Sender', 'Gesendet', 'Postleitzahl', 'Gelöschte Elemente', 'Bestätigungsnummer', 'Zahlungsarten', 'Teile'],
  },
  es: {
    high: [
      ['Enviar', SEND],
      ['Pagar', PAY],
      ['Confirmar', CONFIRM],
      ['Eliminar', DELETE],
      ['Publicar', POST],
      ['Comprar ahora', BUY],
      ['Transferir', TRANSFER],
      ['Suscribirse', SUBSCRIBE],
      ['Desinstalar', INSTALL],
      ['Restablecer', RESET],
      ['Compartir', SHARE],
    ],
    low: [
      'Remitente',
      'Enviado',
      'Elementos eliminados',
      'Número de confirmación',
      'Historial de pagos',
      'Métodos de pago',
    ],
  },
  pt: {
    high: [
      ['Enviar', SEND],
      ['Pagar', PAY],
      ['Confirmar', CONFIRM],
      ['Excluir', DELETE],
      ['Publicar', POST],
      ['Comprar', BUY],
      ['Transferir', TRANSFER],
      ['Assinar', SUBSCRIBE],
      ['Desinstalar', INSTALL],
      ['Compartilhar', SHARE],
    ],
    low: ['Remetente', 'Enviado', 'Itens excluídos', 'Número de confirmação', 'Formas de pagamento'],
  },
  it: {
    high: [
      ['Invia', SEND],
      ['Paga ora', PAY],
      ['Conferma', CONFIRM],
      ['Elimina', DELETE],
      ['Pubblica', POST],
      ['Acquista', BUY],
      ['Bonifico', TRANSFER],
      ['Iscriviti', SUBSCRIBE],
      ['Disinstalla', INSTALL],
      ['Ripristina', RESET],
      ['Condividi', SHARE],
    ],
    low: ['Mittente', 'Inviato', 'Elementi eliminati', 'Numero di conferma', 'Metodi di pagamento'],
  },
  nl: {
    high: [
      ['Verzenden', SEND],
      ['Betalen', PAY],
      ['Bevestigen', CONFIRM],
      ['Verwijderen', DELETE],
      ['Publiceren', POST],
      ['Kopen', BUY],
      ['Overmaken', TRANSFER],
      ['Abonneren', SUBSCRIBE],
      ['Installeren', INSTALL],
      ['Delen', SHARE],
    ],
    low: ['Afzender', 'Verzonden', 'Verwijderde items', 'Bevestigingsnummer', 'Betaalmethoden'],
  },
  pl: {
    high: [
      ['Wyślij', SEND],
      ['Zapłać', PAY],
      ['Potwierdź', CONFIRM],
      ['Usuń', DELETE],
      ['Opublikuj', POST],
      ['Kup teraz', BUY],
      ['Przelew', TRANSFER],
      ['Subskrybuj', SUBSCRIBE],
      ['Odinstaluj', INSTALL],
      ['Udostępnij', SHARE],
    ],
    low: ['Nadawca', 'Wysłane', 'Usunięte', 'Numer potwierdzenia', 'Historia przelewów'],
  },
  tr: {
    high: [
      ['Gönder', SEND],
      ['GÖNDER', SEND],
      ['Şimdi öde', PAY],
      ['Onayla', CONFIRM],
      ['SİL', DELETE],
      ['Yayınla', POST],
      ['Satın al', BUY],
      ['SATIN AL', BUY],
      ['Havale', TRANSFER],
      ['Abone ol', SUBSCRIBE],
      ['Sıfırla', RESET],
      ['Paylaş', SHARE],
    ],
    low: ['Gönderen', 'Gönderildi', 'Silinmiş öğeler', 'Onay kodu', 'Ödeme yöntemleri', 'İptal'],
  },
  id: {
    high: [
      ['Kirim', SEND],
      ['Bayar', PAY],
      ['Konfirmasi', CONFIRM],
      ['Hapus', DELETE],
      ['Terbitkan', POST],
      ['Beli sekarang', BUY],
      ['Transfer', TRANSFER],
      ['Berlangganan', SUBSCRIBE],
      ['Bagikan', SHARE],
    ],
    low: ['Pengirim', 'Terkirim', 'Kode konfirmasi', 'Riwayat transfer', 'Pesan'],
  },
  vi: {
    high: [
      ['Gửi', SEND],
      ['Thanh toán', PAY],
      ['Xác nhận', CONFIRM],
      ['Xóa', DELETE],
      ['Đăng bài', POST],
      ['Mua ngay', BUY],
      ['Chuyển tiền', TRANSFER],
      ['Đăng ký', SUBSCRIBE],
      ['Gỡ cài đặt', INSTALL],
      ['Chia sẻ', SHARE],
    ],
    low: ['Người gửi', 'Đã gửi', 'Mùa hè', 'Lịch sử thanh toán', 'Mã xác nhận', 'Đang tải', 'Đăng nhập'],
  },
  ru: {
    high: [
      ['Отправить', SEND],
      ['отправить', SEND],
      ['Оплатить', PAY],
      ['Подтвердить', CONFIRM],
      ['Удалить', DELETE],
      ['Опубликовать', POST],
      ['Купить', BUY],
      ['Перевести', TRANSFER],
      ['Подписаться', SUBSCRIBE],
      ['Отписаться', UNSUBSCRIBE],
      ['Сбросить', RESET],
      ['Поделиться', SHARE],
    ],
    low: ['Отправитель', 'Отправлено', 'Удалённые', 'Номер подтверждения', 'Способы оплаты', 'Подписки'],
  },
  uk: {
    high: [
      ['Надіслати', SEND],
      ['Оплатити', PAY],
      ['Підтвердити', CONFIRM],
      ['Видалити', DELETE],
      ['Опублікувати', POST],
      ['Купити', BUY],
      ['Переказати', TRANSFER],
      ['Підписатися', SUBSCRIBE],
      ['Встановити', INSTALL],
      ['Поділитися', SHARE],
    ],
    low: ['Відправник', 'Надіслано', 'Видалені', 'Номер підтвердження', 'Способи оплати'],
  },
  el: {
    high: [
      ['Αποστολή', SEND],
      ['ΑΠΟΣΤΟΛΗ', SEND],
      ['Πληρωμή', PAY],
      ['Επιβεβαίωση', CONFIRM],
      ['Διαγραφή', DELETE],
      ['Δημοσίευση', POST],
      ['Αγορά', BUY],
      ['Μεταφορά', TRANSFER],
      ['ΚΑΤΑΡΓΗΣΗ ΕΓΓΡΑΦΗΣ', UNSUBSCRIBE],
      ['Επαναφορά', RESET],
      ['Κοινοποίηση', SHARE],
    ],
    low: ['Αποστολέας', 'Απεσταλμένα', 'Διαγραμμένα', 'Αριθμός επιβεβαίωσης', 'Τρόποι πληρωμής'],
  },
  ar: {
    high: [
      ['إرسال', SEND],
      ['ارسال', SEND],
      ['إرْسَال', SEND],
      ['ادفع الآن', PAY],
      ['تأكيد', CONFIRM],
      ['حذف', DELETE],
      ['نشر', POST],
      ['شراء', BUY],
      ['تحويل', TRANSFER],
      ['اشترك', SUBSCRIBE],
      ['مشاركة', SHARE],
    ],
    low: ['المرسل', 'المحذوفات', 'رقم التأكيد', 'طرق الدفع', 'الإعدادات'],
  },
  he: {
    high: [
      ['שלח', SEND],
      ['שְׁלַח', SEND],
      ['לתשלום', PAY],
      ['אישור', CONFIRM],
      ['מחק', DELETE],
      ['פרסם', POST],
      ['רכישה', BUY],
      ['העברה', TRANSFER],
      ['הירשם', SUBSCRIBE],
      ['שתף', SHARE],
    ],
    low: ['שולח', 'נשלח', 'מספר אישור', 'אמצעי תשלום', 'הגדרות'],
  },
  hi: {
    high: [
      ['भेजें', SEND],
      ['भुगतान करें', PAY],
      ['पुष्टि करें', CONFIRM],
      ['हटाएं', DELETE],
      ['हटाएँ', DELETE],
      ['पोस्ट करें', POST],
      ['खरीदें', BUY],
      ['सदस्यता लें', SUBSCRIBE],
      ['साझा करें', SHARE],
    ],
    low: ['भेजने वाला', 'भेजा गया', 'भुगतान इतिहास', 'सेटिंग्स'],
  },
  th: {
    high: [
      ['ส่ง', SEND],
      ['ชำระเงิน', PAY],
      ['ยืนยัน', CONFIRM],
      ['ลบ', DELETE],
      ['โพสต์', POST],
      ['ซื้อเลย', BUY],
      ['โอนเงิน', TRANSFER],
      ['สมัครสมาชิก', SUBSCRIBE],
      ['ติดตั้ง', INSTALL],
      ['แชร์', SHARE],
    ],
    low: ['ผู้ส่ง', 'ส่งแล้ว', 'รหัสยืนยัน', 'ลบแล้ว', 'การตั้งค่า'],
  },
  ko: {
    high: [
      ['보내기', SEND],
      ['전송', SEND],
      ['결제하기', PAY],
      ['확인', CONFIRM],
      ['삭제', DELETE],
      ['게시', POST],
      ['구매하기', BUY],
      ['송금', TRANSFER],
      ['구독', SUBSCRIBE],
      ['구독 취소', UNSUBSCRIBE],
      ['구독취소', UNSUBSCRIBE],
      ['초기화', RESET],
      ['공유', SHARE],
    ],
    low: ['보낸 사람', '전송됨', '결제 내역', '보낸편지함', '설정'],
  },
  ja: {
    high: [
      ['送信', SEND],
      ['送信する', SEND],
      ['支払う', PAY],
      ['確認', CONFIRM],
      ['削除', DELETE],
      ['投稿する', POST],
      ['購入する', BUY],
      ['今すぐ購入', BUY],
      ['送金', TRANSFER],
      ['購読', SUBSCRIBE],
      ['ｲﾝｽﾄｰﾙ', INSTALL],
      ['リセット', RESET],
      ['共有', SHARE],
    ],
    low: ['送信者', '送信済み', '確認番号', '削除済み', '支払い方法', '設定'],
  },
  'zh-Hans': {
    high: [
      ['发送', SEND],
      ['付款', PAY],
      ['确认', CONFIRM],
      ['删除', DELETE],
      ['发布', POST],
      ['立即购买', BUY],
      ['转账', TRANSFER],
      ['订阅', SUBSCRIBE],
      ['卸载', INSTALL],
      ['重置', RESET],
      ['分享', SHARE],
    ],
    low: ['发送者', '已发送', '付款方式', '发件人', '付款记录', '设置'],
  },
  'zh-Hant': {
    high: [
      ['傳送', SEND],
      ['付款', PAY],
      ['確認', CONFIRM],
      ['刪除', DELETE],
      ['發佈', POST],
      ['立即購買', BUY],
      ['轉帳', TRANSFER],
      ['訂閱', SUBSCRIBE],
      ['解除安裝', INSTALL],
      ['分享', SHARE],
    ],
    low: ['已傳送', '寄件者', '付款方式', '已刪除', '設定'],
  },
  cs: {
    high: [
      ['Odeslat', SEND],
      ['Zaplatit', PAY],
      ['Potvrdit', CONFIRM],
      ['Smazat', DELETE],
      ['Zveřejnit', POST],
      ['Koupit nyní', BUY],
      ['Dokončit objednávku', BUY],
      ['Převést peníze', TRANSFER],
      ['Odebírat', SUBSCRIBE],
      ['Zrušit odběr', UNSUBSCRIBE],
      ['Odinstalovat', INSTALL],
      ['Obnovit tovární nastavení', RESET],
      ['Sdílet', SHARE],
    ],
    low: [
      'Odesílatel',
      'Odesláno',
      'Smazané položky',
      'Číslo potvrzení',
      'Způsoby platby',
      'Historie objednávek',
      'Nastavení',
    ],
  },
  hu: {
    high: [
      ['Küldés', SEND],
      ['Fizetés', PAY],
      ['Megerősítés', CONFIRM],
      ['Törlés', DELETE],
      ['Közzététel', POST],
      ['Vásárlás', BUY],
      ['Tovább a pénztárhoz', BUY],
      ['Átutalás', TRANSFER],
      ['Feliratkozás', SUBSCRIBE],
      ['Leiratkozás', UNSUBSCRIBE],
      ['Telepítés', INSTALL],
      ['Visszaállítás', RESET],
      ['Megosztás', SHARE],
    ],
    low: [
      'Feladó',
      'Elküldve',
      'Törölt elemek',
      'Fizetési módok',
      'Vásárlási előzmények',
      'Megerősítő kód',
      'Beállítások',
    ],
  },
  ro: {
    high: [
      ['Trimite', SEND],
      ['Plătește acum', PAY],
      ['Confirmați', CONFIRM],
      ['Șterge', DELETE],
      ['Ştergeţi', DELETE],
      ['Publicați', POST],
      ['Cumpără acum', BUY],
      ['Plasează comanda', BUY],
      ['Transferă', TRANSFER],
      ['Abonează-te', SUBSCRIBE],
      ['Dezabonare', UNSUBSCRIBE],
      ['Dezinstalează', INSTALL],
      ['Resetează', RESET],
      ['Distribuie', SHARE],
    ],
    low: [
      'Expeditor',
      'Trimis',
      'Elemente șterse',
      'Cod de confirmare',
      'Metode de plată',
      'Istoricul comenzilor',
      'Setări',
    ],
  },
  sr: {
    high: [
      ['Пошаљи', SEND],
      ['Плати', PAY],
      ['Потврди', CONFIRM],
      ['Избриши', DELETE],
      ['Објави', POST],
      ['Купи одмах', BUY],
      ['Пренос новца', TRANSFER],
      ['Претплати се', SUBSCRIBE],
      ['Откажи претплату', UNSUBSCRIBE],
      ['Деинсталирај', INSTALL],
      ['Ресетуј', RESET],
      ['Подели', SHARE],
    ],
    low: ['Пошиљалац', 'Послато', 'Избрисане ставке', 'Начини плаћања', 'Број потврде', 'Подешавања'],
  },
  'sr-Latn': {
    high: [
      ['Pošalji', SEND],
      ['Plati odmah', PAY],
      ['Potvrdi', CONFIRM],
      ['Izbriši', DELETE],
      ['Objavi', POST],
      ['Kupi', BUY],
      ['Prenos novca', TRANSFER],
      ['Pretplati se', SUBSCRIBE],
      ['Otkaži pretplatu', UNSUBSCRIBE],
      ['Deinstaliraj', INSTALL],
      ['Resetuj', RESET],
      ['Podeli', SHARE],
    ],
    low: ['Pošiljalac', 'Poslato', 'Izbrisane stavke', 'Načini plaćanja', 'Broj potvrde', 'Podešavanja'],
  },
  sw: {
    high: [
      ['Tuma', SEND],
      ['Lipa sasa', PAY],
      ['Lipa na M-Pesa', PAY],
      ['Thibitisha', CONFIRM],
      ['Futa', DELETE],
      ['Chapisha', POST],
      ['Nunua sasa', BUY],
      ['Tuma pesa', TRANSFER],
      ['Jisajili', SUBSCRIBE],
      ['Jiondoe', UNSUBSCRIBE],
      ['Sakinisha', INSTALL],
      ['Weka upya', RESET],
      ['Shiriki', SHARE],
    ],
    low: ['Mtumaji', 'Imetumwa', 'Vipengee vilivyofutwa', 'Njia za malipo', 'Historia ya malipo', 'Mipangilio'],
  },
  fil: {
    high: [
      ['Ipadala', SEND],
      ['Magbayad', PAY],
      ['Kumpirmahin', CONFIRM],
      ['Burahin', DELETE],
      ['Mag-post', POST],
      ['Bilhin ngayon', BUY],
      ['Magpadala ng pera', TRANSFER],
      ['Mag-subscribe', SUBSCRIBE],
      ['Mag-unsubscribe', UNSUBSCRIBE],
      ['Mag-uninstall', INSTALL],
      ['I-reset ang device', RESET],
      ['Ibahagi', SHARE],
    ],
    low: [
      'Nagpadala',
      'Naipadala na',
      'Mga binurang item',
      'Paraan ng pagbabayad',
      'Kasaysayan ng pagbili',
      'Mga setting',
    ],
  },
  bn: {
    high: [
      ['পাঠান', SEND],
      ['পেমেন্ট করুন', PAY],
      ['নিশ্চিত করুন', CONFIRM],
      ['মুছুন', DELETE],
      ['পোস্ট করুন', POST],
      ['এখনই কিনুন', BUY],
      ['টাকা পাঠান', TRANSFER],
      ['সাবস্ক্রাইব করুন', SUBSCRIBE],
      ['সদস্যতা বাতিল করুন', UNSUBSCRIBE],
      ['আনইনস্টল করুন', INSTALL],
      ['রিসেট করুন', RESET],
      ['শেয়ার করুন', SHARE],
    ],
    low: ['প্রেরক', 'পাঠানো হয়েছে', 'মুছে ফেলা আইটেম', 'পেমেন্টের পদ্ধতি', 'সেটিংস'],
  },
  mr: {
    high: [
      ['पाठवा', SEND],
      ['पेमेंट करा', PAY],
      ['पुष्टी करा', CONFIRM],
      ['हटवा', DELETE],
      ['पोस्ट करा', POST],
      ['खरेदी करा', BUY],
      ['पैसे पाठवा', TRANSFER],
      ['सदस्यता घ्या', SUBSCRIBE],
      ['सदस्यता रद्द करा', UNSUBSCRIBE],
      ['अनइंस्टॉल करा', INSTALL],
      ['रीसेट करा', RESET],
      ['शेअर करा', SHARE],
    ],
    low: ['पाठवणारा', 'पाठवले', 'हटवलेले आयटम', 'पेमेंट पद्धती', 'सेटिंग्ज'],
  },
  ta: {
    high: [
      ['அனுப்பு', SEND],
      ['பணம் செலுத்து', PAY],
      ['உறுதிசெய்', CONFIRM],
      ['நீக்கு', DELETE],
      ['இடுகையிடு', POST],
      ['இப்போது வாங்கு', BUY],
      ['பணம் அனுப்பு', TRANSFER],
      ['குழுசேர்', SUBSCRIBE],
      ['குழுவிலகு', UNSUBSCRIBE],
      ['நிறுவல் நீக்கு', INSTALL],
      ['மீட்டமை', RESET],
      ['பகிர்', SHARE],
    ],
    low: ['அனுப்புநர்', 'அனுப்பப்பட்டது', 'நீக்கப்பட்டவை', 'பணம் செலுத்தும் முறைகள்', 'அமைப்புகள்'],
  },
  te: {
    high: [
      ['పంపు', SEND],
      ['చెల్లించండి', PAY],
      ['నిర్ధారించండి', CONFIRM],
      ['తొలగించు', DELETE],
      ['పోస్ట్ చేయండి', POST],
      ['ఇప్పుడే కొనండి', BUY],
      ['డబ్బు పంపండి', TRANSFER],
      ['సబ్‌స్క్రయిబ్ చేయండి', SUBSCRIBE],
      ['సభ్యత్వం రద్దు చేయండి', UNSUBSCRIBE],
      ['అన్‌ఇన్‌స్టాల్ చేయండి', INSTALL],
      ['రీసెట్ చేయండి', RESET],
      ['షేర్ చేయండి', SHARE],
    ],
    low: ['పంపినవారు', 'పంపబడింది', 'తొలగించబడిన అంశాలు', 'చెల్లింపు పద్ధతులు', 'సెట్టింగ్‌లు'],
  },
  ka: {
    high: [
      ['გაგზავნა', SEND],
      ['გადახდა', PAY],
      ['დადასტურება', CONFIRM],
      ['წაშლა', DELETE],
      ['გამოქვეყნება', POST],
      ['ყიდვა', BUY],
      ['გადარიცხვა', TRANSFER],
      ['გამოწერა', SUBSCRIBE],
      ['გამოწერის გაუქმება', UNSUBSCRIBE],
      ['დეინსტალაცია', INSTALL],
      ['გადაყენება', RESET],
      ['გაზიარება', SHARE],
    ],
    low: ['გამგზავნი', 'გაგზავნილი', 'წაშლილი ელემენტები', 'გადახდის მეთოდები', 'პარამეტრები'],
  },
  hy: {
    high: [
      ['Ուղարկել', SEND],
      ['Վճարել', PAY],
      ['Հաստատել', CONFIRM],
      ['Ջնջել', DELETE],
      ['Հրապարակել', POST],
      ['Գնել հիմա', BUY],
      ['Փոխանցել', TRANSFER],
      ['Բաժանորդագրվել', SUBSCRIBE],
      ['Ապաբաժանորդագրվել', UNSUBSCRIBE],
      ['Ապատեղադրել', INSTALL],
      ['Վերակայել', RESET],
      ['Կիսվել', SHARE],
    ],
    low: ['Ուղարկող', 'Ուղարկված', 'Ջնջված տարրեր', 'Վճարման եղանակներ', 'Կարգավորումներ'],
  },
  am: {
    high: [
      ['ላክ', SEND],
      ['ይክፈሉ', PAY],
      ['አረጋግጥ', CONFIRM],
      ['ሰርዝ', DELETE],
      ['ያትሙ', POST],
      ['አሁን ይግዙ', BUY],
      ['ገንዘብ ላክ', TRANSFER],
      ['ደንበኝነት ይመዝገቡ', SUBSCRIBE],
      ['ደንበኝነትን ያቋርጡ', UNSUBSCRIBE],
      ['ያራግፉ', INSTALL],
      ['ዳግም አስጀምር', RESET],
      ['አጋራ', SHARE],
    ],
    low: ['ላኪ', 'ተልኳል', 'የተሰረዙ ንጥሎች', 'የክፍያ ዘዴዎች', 'ቅንብሮች'],
  },
};

describe.each(Object.entries(TABLES) as [LanguageCode, LanguageTable][])('target text in %s', (code, table) => {
  const name = LANGUAGES[code].name;

  it.each(table.high)(`is high for "%s" (%s, ${name})`, (text, meaning) => {
    const verdict = tap(text);
    expect(verdict.level).toBe('high');
    const reason = verdict.reasons.find((r) => r.startsWith(`target text means ${meaning}: `));
    expect(reason).toBeDefined();
    expect(reason).toContain(name);
  });

  it.each(table.low)(`stays low for "%s" (${name})`, (text) => {
    const verdict = tap(text);
    expect(verdict).toEqual({
      level: 'low',
      reasons: expect.arrayContaining(['no high-risk word in the target text']),
    });
  });
});

describe('the lexicon', () => {
  const languages = Object.keys(LANGUAGES) as LanguageCode[];

  it('covers at least 35 languages across every script its languages are written in', () => {
    expect(languages.length).toBeGreaterThanOrEqual(35);
    const words = HIGH_RISK_CONCEPTS.flatMap((c) => Object.values(c.words).flat()).join(' ');
    const scripts = ['Latin', 'Cyrillic', 'Greek', 'Armenian', 'Georgian', 'Arabic', 'Hebrew', 'Ethiopic'];
    for (const script of [...scripts, 'Devanagari', 'Bengali', 'Tamil', 'Telugu', 'Thai', 'Hangul', 'Han']) {
      expect(new RegExp(`\\p{Script=${script}}`, 'u').test(words)).toBe(true);
    }
    expect(/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(words)).toBe(true);
  });

  it('has a table of both sides for every language', () => {
    expect(Object.keys(TABLES).sort()).toEqual([...languages].sort());
  });

  it('gives every language every concept', () => {
    for (const concept of HIGH_RISK_CONCEPTS) {
      expect({ concept: concept.id, missing: languages.filter((l) => !concept.words[l]?.length) }).toEqual({
        concept: concept.id,
        missing: [],
      });
    }
  });

  it('makes every listed word high on its own, for its meaning and language', () => {
    const misses: string[] = [];
    for (const concept of HIGH_RISK_CONCEPTS) {
      for (const [code, words] of Object.entries(concept.words) as [LanguageCode, readonly string[]][]) {
        for (const word of words) {
          const ok = tap(word).reasons.some(
            (r) => r.startsWith(`target text means ${concept.meaning}: `) && r.includes(LANGUAGES[code].name),
          );
          if (!ok) misses.push(`${code} ${word}`);
        }
      }
    }
    expect(misses).toEqual([]);
  });
});
