SELECT cluster, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, ver
FROM refusals FINAL
WHERE has(?, cluster) AND (? OR has(?, namespace))
