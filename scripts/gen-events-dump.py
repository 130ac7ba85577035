import json, sys
# A `kubectl get events -A -o json` dump of about N MB: Events as the apiserver
# returns them (managedFields included), 1,000 objects, 4 reasons.
target = int(sys.argv[1]) * 1_000_000
out = sys.stdout
out.write('{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n')
size, i = 0, 0
while size < target:
    t = f"2026-11-29T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"
    pod = f"web-{i % 1000:04d}-7c9d5"
    e = {"apiVersion": "v1", "kind": "Event",
         "metadata": {"name": f"{pod}.{0x187c3a4b5d6e7f80 + i:x}", "namespace": f"ns-{i % 20}",
                      "uid": f"{i:08x}-1b2d-4e3f-8a9b-0c1d2e3f4a5b", "resourceVersion": str(100000 + i),
                      "creationTimestamp": t,
                      "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": t,
                                         "fieldsType": "FieldsV1", "fieldsV1": {"f:count": {}, "f:firstTimestamp": {}, "f:involvedObject": {}, "f:lastTimestamp": {}, "f:message": {}, "f:reason": {}, "f:source": {"f:component": {}, "f:host": {}}, "f:type": {}}}]},
         "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": f"ns-{i % 20}", "name": pod,
                            "uid": f"{i % 1000:08x}-aaaa-4e3f-8a9b-0c1d2e3f4a5b", "resourceVersion": "4242",
                            "fieldPath": "spec.containers{web}"},
         "reason": ["BackOff", "Pulled", "Unhealthy", "FailedScheduling"][i % 4],
         "message": f"Back-off restarting failed container web in pod {pod}_ns-{i % 20}({i % 1000:08x}-aaaa) attempt {i}",
         "source": {"component": "kubelet", "host": f"node-{i % 7}"},
         "firstTimestamp": t, "lastTimestamp": t, "count": 1 + i % 9, "type": "Warning",
         "eventTime": None, "reportingComponent": "kubelet", "reportingInstance": f"node-{i % 7}"}
    s = ("," if i else "") + json.dumps(e, indent=4)
    out.write(s)
    size += len(s)
    i += 1
out.write("\n]}\n")
