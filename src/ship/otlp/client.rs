//! The OTLP/HTTP client: posts a batch's bodies, reads each answer, and counts the batch
//! shipped only when every request got a 2xx that rejected nothing.

use super::*;

pub(super) type Client = hyper_util::client::legacy::Client<
    crate::ship::http::Connector<
        hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    >,
    Full<Bytes>,
>;

/// An OTLP/HTTP logs destination.
pub struct Otlp {
    url: OtlpUrl,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    client: Client,
    /// The body writer and the strings read, kept from one batch to the next.
    reading: std::sync::Mutex<(Body, crate::ship::outbox::StringCache)>,
}

impl Otlp {
    pub fn new(
        url: OtlpUrl,
        headers: &[(String, String)],
    ) -> Result<Otlp, crate::ship::url::UrlError> {
        let fail = |why: String| crate::ship::url::UrlError::new(&url.shown(), why);
        let mut hs = Vec::new();
        for (n, v) in headers {
            let name = http::HeaderName::from_bytes(n.as_bytes())
                .map_err(|_| fail(format!("header #{}: {}", hs.len() + 1, NOT_A_NAME)))?;
            let mut value = http::HeaderValue::from_str(v).map_err(|_| {
                fail(format!(
                    "header #{}: the value is not a valid header value (its text is not shown)",
                    hs.len() + 1
                ))
            })?;
            value.set_sensitive(true);
            hs.push((name, value));
        }
        // NB: the system's roots (a collector behind a private CA), else the compiled-in ones.
        let connector = crate::ship::http::connector(LIMITS, true, Default::default());
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector);
        Ok(Otlp {
            url,
            headers: hs,
            client,
            reading: std::sync::Mutex::default(),
        })
    }

    pub fn url(&self) -> &OtlpUrl {
        &self.url
    }

    /// An empty request: the endpoint answers, and takes our headers.
    pub async fn probe(&self) -> Result<(), ChError> {
        let empty = gzip(&ExportLogsServiceRequest::default().encode_to_vec()).map_err(|e| {
            ChError::Unavailable {
                url: self.url.shown(),
                detail: format!("compressing: {e}"),
            }
        })?;
        self.post(empty, 0, PROBE_TIMEOUT).await
    }

    /// The next batch after `after`, its records written as request bodies
    /// of [`RECORDS_PER_REQUEST`] records at most, or None when the outbox
    /// holds nothing newer.
    ///
    /// NB: written straight from SQLite's rows: through RowBinary and back, as
    /// ClickHouse is sent, was a fifth of the shipper's CPU (issue 32).
    pub fn take(
        &self,
        conn: &rusqlite::Connection,
        after: i64,
        limit: i64,
    ) -> Result<Option<Batch>, crate::ship::outbox::OutboxError> {
        let now_ns = u64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        )
        .unwrap_or(u64::MAX);
        // NB: a panic elsewhere that poisoned it leaves a usable Body.
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let (body, strings) = &mut *reading;
        let mut bodies = Vec::new();
        let range =
            crate::ship::outbox::read(conn, after, limit, OTLP_TABLES, strings, |table, values| {
                body.push(&record(table, values, now_ns));
                if body.records == RECORDS_PER_REQUEST {
                    bodies.push((gzip(body.finish())?, RECORDS_PER_REQUEST));
                }
                Ok(())
            });
        // NB: before `range?`: a batch that failed half-way leaves nothing for the next.
        let rest = (body.records > 0).then(|| (body.records, gzip(body.finish())));
        let range = range?;
        if let Some((n, gz)) = rest {
            bodies.push((gz?, n));
        }
        Ok(range.map(|(first, last)| Batch {
            first,
            last,
            parts: Vec::new(),
            bodies,
        }))
    }

    /// Sends a batch's bodies; Ok only when every request was taken whole.
    pub async fn send(&self, batch: &Batch) -> Result<(), ChError> {
        for (bytes, n) in &batch.bodies {
            self.post(bytes.clone(), *n, REQUEST_TIMEOUT).await?;
        }
        Ok(())
    }

    /// Posts one request body (gzipped protobuf).
    async fn post(&self, body: Bytes, records: usize, limit: Duration) -> Result<(), ChError> {
        let shown = self.url.shown();
        let unavailable = |detail: String| ChError::Unavailable {
            url: shown.clone(),
            detail,
        };
        let mut builder = http::Request::post(self.url.http())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .header(http::header::CONTENT_ENCODING, "gzip")
            .header(
                http::header::USER_AGENT,
                concat!("kubectl-diag/", env!("CARGO_PKG_VERSION")),
            );
        for (n, v) in &self.headers {
            builder = builder.header(n, v);
        }
        let request = builder
            .body(Full::new(body))
            .map_err(|e| unavailable(format!("building the request: {e}")))?;
        let answer = tokio::time::timeout(limit, async {
            let response = self.client.request(request).await.map_err(|e| {
                unavailable(
                    crate::render::escape(&crate::ship::clickhouse::unreached(&self.url.host, &e))
                        .into_owned(),
                )
            })?;
            let (parts, body) = response.into_parts();
            // NB: at most REPLY_CAP of it; the rest is never read (the connection is dropped).
            let (bytes, over) = crate::ship::http::read_capped(body, REPLY_CAP)
                .await
                .map_err(|e| {
                    unavailable(format!(
                        "reading the answer: {}",
                        crate::render::escape(&crate::ship::clickhouse::unreached(
                            &self.url.host,
                            &e
                        ))
                    ))
                })?;
            Ok::<_, ChError>((parts, bytes, over))
        })
        .await
        .map_err(|_| unavailable(format!("no answer in {} s", limit.as_secs())))??;
        let (parts, bytes, over) = answer;
        let status = parts.status;
        let cut = if over {
            format!(
                " (the answer's body is over {} KiB: not read past that)",
                REPLY_CAP / 1024
            )
        } else {
            String::new()
        };
        if status.is_success() && over {
            // NB: not an OTLP answer; what it took is unknown, so the batch is sent again.
            return Err(ChError::Refused {
                url: shown,
                detail: format!("HTTP {status}{cut}"),
                hint: "; an OTLP/HTTP logs endpoint answers a short ExportLogsServiceResponse: is the URL a collector's?",
            });
        }
        if status.is_success() {
            let reply = ExportLogsServiceResponse::decode(bytes.as_ref()).unwrap_or_default();
            // NB: a warning with nothing rejected is a success (OTLP spec), and so is a
            // body that is not a response message (an empty one, say).
            if let Some(p) = reply.partial_success
                && p.rejected_log_records > 0
            {
                return Err(partially_rejected(shown, records, &p));
            }
            return Ok(());
        }
        let detail = {
            let text = String::from_utf8_lossy(&bytes);
            let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
            // NB: bidirectional and other formatting characters are not `is_control`.
            let text = crate::render::escape(&text);
            format!(
                "HTTP {status}{}{cut}",
                if text.is_empty() {
                    String::new()
                } else {
                    format!(": {text}")
                }
            )
        };
        let code = status.as_u16();
        match code {
            // NB: the OTLP spec's retryable answers; Retry-After honoured when given.
            429 | 502 | 503 | 504 => {
                let after = parts
                    .headers
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
                Err(match after {
                    Some(after) => ChError::Busy {
                        url: shown,
                        detail,
                        after,
                    },
                    None => unavailable(detail),
                })
            }
            500..=599 => Err(unavailable(detail)),
            401 | 403 => Err(ChError::Refused {
                url: shown,
                detail,
                hint: "; check the credentials given with --ship-header/--ship-header-file (--header/--header-file for ship)",
            }),
            404 | 405 => Err(ChError::Refused {
                url: shown,
                detail,
                hint: "; is the path right? OTLP/HTTP logs are posted to /v1/logs",
            }),
            _ => Err(ChError::Refused {
                url: shown,
                detail,
                hint: "",
            }),
        }
    }
}

/// A 200 whose `partial_success` rejected records: a refusal, its message
/// escaped (the receiver's text reaches the status line and stderr) and cut.
pub(super) fn partially_rejected(
    url: String,
    records: usize,
    p: &opentelemetry_proto::tonic::collector::logs::v1::ExportLogsPartialSuccess,
) -> ChError {
    let message: String = p.error_message.chars().take(200).collect();
    let message = crate::render::escape(&message);
    let said = if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    };
    // NB: the start probe sends no record: "rejected 1 of 0" said nothing.
    if records == 0 {
        return ChError::Refused {
            url,
            detail: format!(
                "answered the start probe (an empty request) with {} rejected record(s){said}",
                p.rejected_log_records
            ),
            hint: "; the collector refuses even an empty request: check its configuration and the --ship-header/--header credentials",
        };
    }
    ChError::Refused {
        url,
        detail: format!(
            "rejected {} of {records} record(s){said}",
            p.rejected_log_records
        ),
        hint: "; the batch is sent again until it is taken whole",
    }
}
