-- OTLP: each occurrence row named by the batch's keys, with everything its log
-- record says (src/ship/otlp.rs, docs/schema.md "OTLP logs"): its Event, the
-- object the Event is about, the cluster. `start`: the Event's earliest stored
-- occurrence, what k8s.event.start_time (the Event's creation) is taken from.
-- NB: the row of its lowest count, one seek of the primary key; min(first)
-- read every occurrence of the Event for each one shipped, a third of this
-- statement (counts grow with time, so both are the same row). No seek at all
-- for a row that stands for every count up to its own (n = count: the first
-- sighting, or count 1), which is most of them: no row of a lower count exists.
-- NB: no ORDER BY: rows come in the order of the batch's keys (event, count),
-- and a log record carries its own time; sorting copied every column of every
-- row into a temporary B-tree, a fifth of the shipper's CPU (issue 32).
-- NB: strings as their ids (Ty::Id), the Event's uid as stored (Ty::Uid): the
-- outbox reader resolves each id once a batch and writes the uid; 17 joins of
-- `strings`, five hex() and a printf() a row were most of the shipper's reading
-- (issue 32). The Event's name as stored: src/ship/otlp.rs makes client-go's
-- `<object>.<hex>` of an integer (store::compact_event_name).
SELECT c.uid, c.label, e.uid, e.namespace, e.name,
       oc.count, oc.n, oc.first, oc.last, oc.message,
       e.type, e.reason, e.action, e.controller, e.instance, e.host,
       o.kind, o.namespace, o.name, o.uid, o.api_version, e.field_path,
       CASE WHEN oc.count > 0 AND oc.n >= oc.count THEN oc.first
            ELSE (SELECT f.first FROM occurrences f WHERE f.event_id = e.id ORDER BY f.count LIMIT 1)
       END
FROM temp.ship_keys k
JOIN occurrences oc ON oc.event_id = k.a AND oc.count = k.b
JOIN events e ON e.id = oc.event_id
JOIN clusters c ON c.id = e.cluster_id
JOIN objects o ON o.id = e.object_id
WHERE k.tbl = 1
