-- `query --cluster` and `--all-clusters`: views in the temporary schema that
-- shadow the recording's tables with one cluster's rows (the one in
-- temp.scope), so that any query, built-in or the user's, reads one cluster
-- without naming it. Unqualified names find temp objects first.
CREATE TEMP TABLE scope (id INTEGER NOT NULL);
INSERT INTO temp.scope (id) VALUES (0);
CREATE TEMP VIEW clusters AS SELECT * FROM main.clusters WHERE id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW objects AS SELECT * FROM main.objects WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW events AS SELECT * FROM main.events WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW occurrences AS
    SELECT o.* FROM main.occurrences o JOIN main.events e ON e.id = o.event_id
    WHERE e.cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW versions AS
    SELECT v.* FROM main.versions v JOIN main.objects b ON b.id = v.object_id
    WHERE b.cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW update_counts AS
    SELECT u.* FROM main.update_counts u JOIN main.objects b ON b.id = u.object_id
    WHERE b.cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW relations AS
    SELECT r.* FROM main.relations r JOIN main.objects b ON b.id = r.child_id
    WHERE b.cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW recorder_sessions AS SELECT * FROM main.recorder_sessions WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW gaps AS SELECT * FROM main.gaps WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW watch_positions AS SELECT * FROM main.watch_positions WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW resource_types AS SELECT * FROM main.resource_types WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW type_changes AS SELECT * FROM main.type_changes WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW refusals AS SELECT * FROM main.refusals WHERE cluster_id = (SELECT id FROM temp.scope);
CREATE TEMP VIEW import_spans AS SELECT * FROM main.import_spans WHERE cluster_id = (SELECT id FROM temp.scope);
