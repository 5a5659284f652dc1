// A message image: a stored message as JSON, in the audit trail's before and
// after (D48) and in each outbox event (D63). Images are kept for a year and
// read back long after they were written, so their form is fixed: the fields
// as the messages table first named them, the dismissible mark as 0 or 1.
// Images written before D61-D63 lack targeting, translations and the mark.
import type { MessageRecord } from "./message-store.js";

/** The image as written: its keys in this order. */
interface Image {
  id: number;
  feature_id: string | null;
  type: string;
  title: string;
  body: string;
  start_date: number;
  expiring_date: number;
  version: number;
  audiences?: string[];
  paths?: string[];
  translations?: MessageRecord["translations"];
  dismissible?: number;
}

export function messageImage(m: MessageRecord): string {
  const image: Image = {
    id: m.id,
    feature_id: m.featureId,
    type: m.type,
    title: m.title,
    body: m.body,
    start_date: m.startDate,
    expiring_date: m.expiringDate,
    version: m.version,
    audiences: m.audiences,
    paths: m.paths,
    translations: m.translations,
    dismissible: m.dismissible ? 1 : 0,
  };
  return JSON.stringify(image);
}

/** The message an image holds; one written before D61-D63 reads as for everyone, in one language, dismissible. */
export function fromMessageImage(json: string): MessageRecord {
  const i = JSON.parse(json) as Image;
  return {
    id: i.id,
    featureId: i.feature_id,
    type: i.type,
    title: i.title,
    body: i.body,
    startDate: i.start_date,
    expiringDate: i.expiring_date,
    dismissible: i.dismissible !== 0,
    version: i.version,
    audiences: i.audiences ?? [],
    paths: i.paths ?? [],
    translations: i.translations ?? {},
  };
}
