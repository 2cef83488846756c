// Original text (support tickets, reviews, notes and small records in several languages and scripts),
// written for the merge learner: common words repeat so that merges beyond single letters form.
#include "modelgen/corpus.h"

namespace verdict::modelgen {
namespace {

constexpr std::string_view kCorpus = R"CORPUS(The customer wrote to the support team on Monday morning. The order had not arrived, and the
tracking page still showed the same status as the week before. She asked whether the package was lost
and whether the store could send a replacement or return the money. The agent read the ticket, checked
the order history and found that the carrier had returned the parcel to the warehouse because the
address was incomplete. The agent answered that the order would be shipped again the same day, at no
extra cost, and that a new tracking number would follow by email.

A good answer is short, polite and correct. It should state what happened, what the company will do,
and when the customer can expect the next update. It should not promise things the ticket does not
support, and it should never invent facts about refunds, prices or delivery dates.

Questions for the reviewer: Is the answer supported by the context? Does the answer contain a claim
that the ticket does not give? Should a person read this ticket before the reply is sent? Which team
should handle it: billing, shipping, technical support or sales? How urgent is it, on a scale from one
to five? What language is the ticket written in?

El cliente escribió al equipo de soporte el lunes por la mañana. El pedido no había llegado y la página
de seguimiento mostraba el mismo estado que la semana anterior. Preguntó si el paquete se había perdido
y si la tienda podía enviar un reemplazo o devolver el dinero. La agente leyó el ticket, revisó el
historial del pedido y vio que la empresa de transporte había devuelto el paquete al almacén porque la
dirección estaba incompleta. Respondió que el pedido se enviaría de nuevo el mismo día, sin coste
adicional, y que recibiría un nuevo número de seguimiento por correo electrónico.

Una buena respuesta es breve, amable y correcta. Debe explicar qué pasó, qué hará la empresa y cuándo
puede esperar el cliente la próxima actualización. ¿La respuesta está respaldada por el contexto? ¿Hace
falta que una persona revise el ticket? ¿Es urgente? ¿En qué idioma está escrito?

O cliente escreveu para a equipe de suporte na segunda-feira de manhã. O pedido ainda não tinha chegado
e a página de rastreamento mostrava o mesmo estado da semana anterior. Ele perguntou se a encomenda
estava perdida e se a loja podia enviar outra ou devolver o dinheiro. A resposta deve ser curta, educada
e correta, e não deve prometer nada que o pedido não confirme.

Le client a écrit à l'équipe d'assistance lundi matin. La commande n'était pas arrivée et la page de
suivi affichait toujours le même état que la semaine précédente. Il a demandé si le colis était perdu et
si le magasin pouvait envoyer un remplacement ou rembourser la commande. Une bonne réponse est courte,
polie et exacte ; elle ne doit pas inventer de faits.

Der Kunde schrieb am Montagmorgen an den Kundendienst. Die Bestellung war nicht angekommen, und die
Sendungsverfolgung zeigte noch denselben Status wie in der Woche davor. Er fragte, ob das Paket verloren
sei und ob der Shop einen Ersatz schicken oder das Geld zurückzahlen könne. Eine gute Antwort ist kurz,
höflich und richtig; sie darf keine Tatsachen erfinden, die das Ticket nicht enthält.

Il cliente ha scritto al servizio clienti lunedì mattina. L'ordine non era arrivato e la pagina di
tracciamento mostrava ancora lo stesso stato della settimana precedente. Ha chiesto se il pacco fosse
andato perso e se il negozio potesse spedire un sostituto o restituire il denaro.

De klant schreef maandagochtend naar de klantenservice. De bestelling was niet aangekomen en de
trackingpagina liet nog steeds dezelfde status zien als de week ervoor.

Klient napisał do działu obsługi w poniedziałek rano. Zamówienie nie dotarło, a strona śledzenia
przesyłki nadal pokazywała ten sam status co tydzień wcześniej. Müşteri pazartesi sabahı destek ekibine
yazdı; sipariş henüz gelmemişti ve takip sayfası bir önceki haftanın durumunu gösteriyordu. Khách hàng
đã viết thư cho bộ phận hỗ trợ vào sáng thứ Hai vì đơn hàng vẫn chưa đến.

Клиент написал в службу поддержки в понедельник утром. Заказ не пришёл, и страница отслеживания
показывала тот же статус, что и неделю назад. Он спросил, не потерялась ли посылка и может ли магазин
отправить замену или вернуть деньги. Хороший ответ должен быть коротким, вежливым и точным. Ответ не
должен обещать того, чего нет в обращении клиента.

客户在星期一早上给客服团队写信。订单还没有到，物流页面显示的状态和上周一样。客户问包裹是否丢失，
商店能否重新发货或者退款。客服查看了订单记录，发现快递公司因为地址不完整把包裹退回了仓库。客服回复说，
订单会在当天重新发货，不收取额外费用，新的物流单号会通过邮件发送。好的回答应该简短、礼貌、准确，
不应该承诺工单里没有的信息。这个回答有上下文支持吗？需要人工处理吗？

お客様は月曜日の朝にサポートチームへ連絡しました。注文した商品がまだ届かず、追跡ページの状態も先週と
同じままでした。お客様は荷物が紛失したのか、代わりの商品を送るか返金してもらえるかを尋ねました。
良い回答は短く、丁寧で、正確でなければなりません。この回答は文脈に裏付けられていますか？

고객은 월요일 아침에 고객 지원팀에 문의했습니다. 주문한 상품이 아직 도착하지 않았고 배송 조회 페이지의
상태도 지난주와 같았습니다. 고객은 소포가 분실되었는지, 대체 상품을 보내거나 환불해 줄 수 있는지
물었습니다. 좋은 답변은 짧고 정중하며 정확해야 합니다.

كتب العميل إلى فريق الدعم صباح يوم الاثنين. لم يصل الطلب بعد، وكانت صفحة التتبع تعرض الحالة نفسها
منذ الأسبوع الماضي. سأل العميل إن كان الطرد قد ضاع، وإن كان المتجر يستطيع إرسال بديل أو إعادة المال.

ग्राहक ने सोमवार सुबह सहायता टीम को लिखा। ऑर्डर अभी तक नहीं पहुँचा था और ट्रैकिंग पेज पर पिछले
सप्ताह वाली ही स्थिति दिख रही थी। अच्छा उत्तर छोटा, विनम्र और सही होना चाहिए।

ลูกค้าเขียนถึงทีมสนับสนุนในเช้าวันจันทร์ เพราะพัสดุยังไม่มาถึง

{"ticket": {"id": 48213, "channel": "email", "language": "en", "subject": "Order not delivered",
"body": "My order 1093-55 has not arrived yet.", "priority": 3, "tags": ["shipping", "delivery"]},
"questions": {"label": {"type": "choice", "options": ["billing", "shipping", "technical", "sales"]},
"urgent": {"type": "yes_no"}, "needs_person": {"type": "yes_no"}, "score": {"type": "score", "levels": 5}}}

{"id": "review-7", "state": {"context": "The store ships within two days.", "question": "When does the
order ship?", "answer": "The order ships within two days."}, "questions": {"supported": {"type":
"yes_no", "instructions": "Is every claim in the answer supported by the context?"}}}

def route(ticket, threshold=0.8):
    decision = decide(ticket)
    if decision["confidence"] < threshold or decision["needs_person"]:
        return escalate(ticket)
    draft = write_reply(ticket)
    review = check_reply(ticket, draft)
    return draft if review["supported"] else escalate(ticket)

for (int i = 0; i < count; ++i) {
  if (values[i] > limit) return i;
}

Numbers and dates: 2024-03-18, 09:30, 12.5%, 1,250.00 EUR, 3 x 4 = 12, 100 + 250 = 350, order #77120.
The answer is yes. The answer is no. The answer is not supported by the context. The ticket is urgent.
The ticket is not urgent. The customer is happy. The customer is not happy. Thank you for your message!
We are sorry for the delay. We will send the order again today. Please check your email for the new
tracking number. Let us know if there is anything else we can do for you.
)CORPUS";

}  // namespace

std::string_view training_corpus() { return kCorpus; }

}  // namespace verdict::modelgen
