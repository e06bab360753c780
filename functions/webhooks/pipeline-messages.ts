// What crosses each hop of the change pipeline, as valibot schemas: every hop decodes its input
// with one of them and refuses, with the reason, what does not fit (no cast of external data).
//   stream record (DynamoDB Streams, NEW_IMAGE) -> change item     ChangeStreamRecord
//   change item -> SQS message body (one per subscription)         DeliveryMessage
//   SQS record (Lambda's SQS event) -> message body -> CloudEvent  DeliveryRecord, ChangeCloudEvent
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html (the stream record Lambda passes)
// https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html (the SQS record Lambda passes)
import * as v from 'valibot';
import { CHANGE_ITEM, CHANGE_SOURCE, CHANGE_TYPES } from '../changes/change-event.ts';

const text = v.pipe(v.string(), v.minLength(1, 'must not be empty'));

/**
 * The CloudEvent of a change as the pipeline relies on it (functions/changes/change-event.ts): the
 * envelope it routes and signs by. The delivered body is the item's exact text, never re-serialised.
 */
export const ChangeCloudEvent = v.object({
  specversion: v.literal('1.0'),
  // Standard Webhooks signs `{id}.{timestamp}.{body}`: an id with a `.` could not be verified.
  id: v.pipe(
    text,
    v.check((id) => !id.includes('.'), 'must not contain a "."'),
  ),
  source: v.literal(CHANGE_SOURCE),
  type: v.picklist(CHANGE_TYPES),
  subject: text,
  time: text,
  datacontenttype: v.literal('application/json'),
  data: v.object({ eventId: text, version: v.number() }),
});
export type ChangeCloudEvent = v.InferOutput<typeof ChangeCloudEvent>;

/** A CloudEvent's JSON text, decoded. */
export const ChangeCloudEventText = v.pipe(v.string(), v.parseJson(), ChangeCloudEvent);

const stringAttribute = <T extends v.GenericSchema<string, string>>(value: T) => v.object({ S: value });

/**
 * A change item's INSERT as the stream mapping passes it (DynamoDB JSON of the new image): the
 * attributes named by CHANGE_ITEM, the CloudEvent's own type and subject agreeing with them.
 */
export const ChangeStreamRecord = v.pipe(
  v.object({
    eventName: v.literal('INSERT'),
    dynamodb: v.object({
      SequenceNumber: text,
      NewImage: v.object({
        [CHANGE_ITEM.cloudEventAttribute]: stringAttribute(text),
        [CHANGE_ITEM.typeAttribute]: stringAttribute(v.picklist(CHANGE_TYPES)),
        [CHANGE_ITEM.eventIdAttribute]: stringAttribute(text),
      }),
    }),
  }),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const image = dataset.value.dynamodb.NewImage;
    const cloudEvent = image[CHANGE_ITEM.cloudEventAttribute].S;
    const decoded = v.safeParse(ChangeCloudEventText, cloudEvent);
    if (!decoded.success) {
      addIssue({ message: `its ${CHANGE_ITEM.cloudEventAttribute} is not a change's CloudEvent (${v.summarize(decoded.issues)})` });
      return NEVER;
    }
    const type = image[CHANGE_ITEM.typeAttribute].S;
    const eventId = image[CHANGE_ITEM.eventIdAttribute].S;
    if (decoded.output.type !== type || decoded.output.subject !== eventId) {
      addIssue({ message: `its CloudEvent's type and subject are not the item's ${type} and ${eventId}` });
      return NEVER;
    }
    return { sequenceNumber: dataset.value.dynamodb.SequenceNumber, changeId: decoded.output.id, type, eventId, cloudEvent };
  }),
);
export type ChangeRecord = v.InferOutput<typeof ChangeStreamRecord>;

/** The delivery queue's message body: one change for one subscription. */
export const DeliveryMessage = v.object({
  subscriptionId: text,
  /** The change's id (the CloudEvent's `id`): the `webhook-id` header. */
  changeId: text,
  eventId: text,
  /** The exact text delivered as the body. */
  cloudEvent: text,
});
export type DeliveryMessage = v.InferOutput<typeof DeliveryMessage>;

/** A body's JSON text, decoded, its CloudEvent the change it names. */
export const DeliveryMessageText = v.pipe(
  v.string(),
  v.parseJson(),
  DeliveryMessage,
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const decoded = v.safeParse(ChangeCloudEventText, dataset.value.cloudEvent);
    if (!decoded.success) addIssue({ message: `its cloudEvent is not a change's CloudEvent (${v.summarize(decoded.issues)})` });
    else if (decoded.output.id !== dataset.value.changeId || decoded.output.subject !== dataset.value.eventId)
      addIssue({ message: "its cloudEvent's id and subject are not its changeId and eventId" });
  }),
);

/**
 * One record of Lambda's SQS event, as the delivery function uses it. FIFO records carry their
 * MessageGroupId (with-sqs.html, "Example Amazon SQS message event (FIFO queue)").
 */
export const DeliveryRecord = v.object({
  messageId: text,
  receiptHandle: text,
  body: v.string(),
  attributes: v.object({ MessageGroupId: text }),
});
export type DeliveryRecord = v.InferOutput<typeof DeliveryRecord>;

/** Lambda's event of a batch: its records, each decoded on its own (one that does not fit is refused alone). */
export const RecordsEvent = v.object({ Records: v.array(v.unknown()) });
