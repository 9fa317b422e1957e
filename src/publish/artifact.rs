//! Uploads the report folder as a workflow artifact with the Actions artifact protocol v4
//! (`actions/toolkit` `packages/artifact`, reference ci_bots.md §5):
//! `CreateArtifact` → blob upload of one zip → `FinalizeArtifact`.
//!
//! Works with github.com (snake_case answers, Azure Blob SAS URL) and with `act`'s artifact
//! server (camelCase answers; stores only `comp=block` bodies, in arrival order — so blocks go
//! up one after the other, never as a single Put Blob).

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use octocrab::Octocrab;
use serde::{Deserialize, Deserializer};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::event::Token;
use crate::publish::{PublishError, RetryPolicy, files_under, retryable};

/// The artifact's name (unique per workflow run).
pub const ARTIFACT_NAME: &str = "efficiency-audit-report";

/// The Twirp service path of the results API.
const TWIRP: &str = "twirp/github.actions.results.api.v1.ArtifactService";
/// Block size of the blob upload (the toolkit streams 8 MiB chunks; smaller keeps memory low).
const BLOCK: usize = 4 * 1024 * 1024;

/// A finished upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    /// The artifact id GitHub (or act) assigned.
    pub id: String,
    /// Bytes of the zip.
    pub size: usize,
    /// `sha256:<hex>` of the zip.
    pub digest: String,
}

#[derive(Deserialize)]
struct CreateAnswer {
    #[serde(default)]
    ok: bool,
    #[serde(alias = "signedUploadUrl")]
    signed_upload_url: String,
}

#[derive(Deserialize)]
struct FinalizeAnswer {
    #[serde(default)]
    ok: bool,
    #[serde(alias = "artifactId", deserialize_with = "int64")]
    artifact_id: String,
}

/// Protobuf JSON writes int64 as a string; accept a number too.
fn int64<'de, D: Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        S(String),
        N(u64),
    }
    Ok(match Raw::deserialize(de)? {
        Raw::S(s) => s,
        Raw::N(n) => n.to_string(),
    })
}

/// The `(workflow_run_backend_id, workflow_job_run_backend_id)` in the runtime token's `scp`
/// claim, `Actions.Results:<run>:<job>` (`shared/util.ts:getBackendIdsFromToken`). The JWT
/// payload is base64url without padding.
pub fn backend_ids(token: &Token) -> Result<(String, String), PublishError> {
    let bad =
        |why: &str| PublishError::Local(format!("ACTIONS_RUNTIME_TOKEN is not usable: {why}"));
    let payload = token
        .expose()
        .split('.')
        .nth(1)
        .ok_or_else(|| bad("not a JWT"))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|_| bad("payload is not base64url"))?;
    let claims: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| bad("payload is not JSON"))?;
    let scp = claims
        .get("scp")
        .and_then(|s| s.as_str())
        .ok_or_else(|| bad("no scp claim"))?;
    scp.split_whitespace()
        .find_map(|s| {
            let parts: Vec<&str> = s.split(':').collect();
            (parts.len() == 3 && parts[0] == "Actions.Results")
                .then(|| (parts[1].to_owned(), parts[2].to_owned()))
        })
        .ok_or_else(|| bad("no Actions.Results scope"))
}

/// Zips the files under `dir` (deflate), paths relative to it.
pub fn zip_dir(dir: &Path) -> Result<Vec<u8>, PublishError> {
    let local = |e: &dyn std::fmt::Display| {
        PublishError::Local(format!("cannot zip {}: {e}", dir.display()))
    };
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, path) in files_under(dir).map_err(|e| local(&e))? {
        let data = std::fs::read(&path).map_err(|e| local(&e))?;
        zip.start_file(name, options).map_err(|e| local(&e))?;
        zip.write_all(&data).map_err(|e| local(&e))?;
    }
    Ok(zip.finish().map_err(|e| local(&e))?.into_inner())
}

/// `GHESNotSupportedError`: the v4 service exists on github.com and GHE.com only.
#[must_use]
pub fn supported_server(server_url: &str) -> bool {
    let host = server_url
        .split("://")
        .nth(1)
        .unwrap_or(server_url)
        .split(['/', ':'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    host == "github.com"
        || host.ends_with(".ghe.com")
        || host.ends_with(".localhost")
        || host == "localhost"
}

/// A client of the results service.
pub struct ArtifactClient {
    rt: tokio::runtime::Runtime,
    http: Octocrab,
    token: Token,
    origin: String,
    retry: RetryPolicy,
}

impl std::fmt::Debug for ArtifactClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtifactClient")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl ArtifactClient {
    /// A client for `ACTIONS_RESULTS_URL` (only its origin is used) with `ACTIONS_RUNTIME_TOKEN`.
    pub fn new(token: Token, results_url: &str) -> Result<Self, PublishError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PublishError::Local(format!("cannot start the HTTP runtime: {e}")))?;
        // No octocrab auth: the runtime token goes to the results service only, never to the
        // blob store (whose SAS URL carries its own signature).
        let http = rt
            .block_on(async {
                Octocrab::builder()
                    .set_connect_timeout(Some(Duration::from_secs(10)))
                    .set_read_timeout(Some(Duration::from_secs(120)))
                    .build()
            })
            .map_err(|e| PublishError::Local(format!("cannot build the HTTP client: {e}")))?;
        let origin = origin_of(results_url);
        Ok(Self {
            rt,
            http,
            token,
            origin,
            retry: RetryPolicy::default(),
        })
    }

    /// Replaces the retry policy (tests use millisecond waits).
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Zips `dir` and uploads it as artifact `name`.
    pub fn upload(&self, name: &str, dir: &Path) -> Result<Uploaded, PublishError> {
        let (run, job) = backend_ids(&self.token)?;
        let zip = zip_dir(dir)?;
        self.rt.block_on(self.upload_zip(name, &run, &job, zip))
    }

    async fn request(
        &self,
        what: &str,
        method: &str,
        uri: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<String, PublishError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut builder = http::Request::builder().method(method).uri(uri);
            for (k, v) in headers {
                builder = builder.header(*k, v);
            }
            let request = builder
                .body(body.clone())
                .map_err(|e| PublishError::Local(format!("{what}: {e}")))?;
            let (status, text) = match self.http.execute(request).await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    match self.http.body_to_string(resp).await {
                        Ok(t) => (status, t),
                        Err(e) => (0, e.to_string()),
                    }
                }
                Err(e) => (0, e.to_string()),
            };
            if (status == 0 || retryable(status)) && attempt < self.retry.attempts {
                tokio::time::sleep(self.retry.delay(attempt, None)).await;
                continue;
            }
            let text = self.token.redact(&text);
            return match status {
                0 => Err(PublishError::Transport {
                    what: what.to_owned(),
                    message: text,
                }),
                200..=299 => Ok(text),
                _ => {
                    // Twirp errors are `{"code": ..., "msg": ...}`; never echo a SAS URL.
                    let msg = serde_json::from_str::<serde_json::Value>(&text)
                        .ok()
                        .and_then(|v| v.get("msg").and_then(|m| m.as_str()).map(str::to_owned))
                        .unwrap_or_else(|| text.chars().take(200).collect());
                    Err(PublishError::Http {
                        what: what.to_owned(),
                        status,
                        message: msg,
                    })
                }
            };
        }
    }

    async fn twirp<T: for<'de> Deserialize<'de>>(
        &self,
        method: &str,
        body: &serde_json::Value,
    ) -> Result<T, PublishError> {
        let what = format!("artifact {method}");
        let uri = format!("{}/{TWIRP}/{method}", self.origin);
        let headers = [
            ("content-type", "application/json".to_owned()),
            ("authorization", format!("Bearer {}", self.token.expose())),
        ];
        let text = self
            .request(&what, "POST", &uri, &headers, body.to_string().into_bytes())
            .await?;
        serde_json::from_str(&text).map_err(|e| PublishError::Transport {
            what,
            message: format!("unexpected answer: {e}"),
        })
    }

    async fn upload_zip(
        &self,
        name: &str,
        run: &str,
        job: &str,
        zip: Vec<u8>,
    ) -> Result<Uploaded, PublishError> {
        let created: CreateAnswer = self
            .twirp(
                "CreateArtifact",
                &json!({
                    "workflow_run_backend_id": run,
                    "workflow_job_run_backend_id": job,
                    "name": name,
                    "version": 4,
                }),
            )
            .await?;
        if !created.ok {
            return Err(PublishError::Http {
                what: "artifact CreateArtifact".into(),
                status: 200,
                message: "the service answered ok=false".into(),
            });
        }
        let url = created.signed_upload_url;
        let sep = if url.contains('?') { '&' } else { '?' };
        let mut ids = Vec::new();
        for (i, chunk) in zip.chunks(BLOCK).enumerate() {
            // Equal-length ids, as Azure requires; digits only, so the base64 needs no escaping.
            let id = base64::engine::general_purpose::STANDARD.encode(format!("{i:06}"));
            let uri = format!("{url}{sep}comp=block&blockid={id}");
            self.request(
                "uploading the artifact",
                "PUT",
                &uri,
                &[("x-ms-blob-type", "BlockBlob".into())],
                chunk.to_vec(),
            )
            .await?;
            ids.push(id);
        }
        let list: String = ids
            .iter()
            .map(|id| format!("<Latest>{id}</Latest>"))
            .collect();
        let xml =
            format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>{list}</BlockList>");
        self.request(
            "committing the artifact",
            "PUT",
            &format!("{url}{sep}comp=blocklist"),
            &[
                ("x-ms-blob-content-type", "application/zip".into()),
                ("content-type", "application/xml".into()),
            ],
            xml.into_bytes(),
        )
        .await?;
        let digest = format!(
            "sha256:{}",
            Sha256::digest(&zip)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let finalized: FinalizeAnswer = self
            .twirp(
                "FinalizeArtifact",
                &json!({
                    "workflow_run_backend_id": run,
                    "workflow_job_run_backend_id": job,
                    "name": name,
                    "size": zip.len().to_string(),
                    "hash": digest,
                }),
            )
            .await?;
        if !finalized.ok {
            return Err(PublishError::Http {
                what: "artifact FinalizeArtifact".into(),
                status: 200,
                message: "the service answered ok=false".into(),
            });
        }
        Ok(Uploaded {
            id: finalized.artifact_id,
            size: zip.len(),
            digest,
        })
    }
}

/// `scheme://host[:port]` of a URL (the toolkit uses `new URL(resultsUrl).origin`).
fn origin_of(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split('/').next().unwrap_or(rest);
            format!("{scheme}://{host}")
        }
        None => url.trim_end_matches('/').to_owned(),
    }
}

/// The artifact's web page (`actions/upload-artifact` `artifact-url` output).
#[must_use]
pub fn artifact_url(server_url: &str, repo: &str, run_id: &str, id: &str) -> String {
    format!("{server_url}/{repo}/actions/runs/{run_id}/artifacts/{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> Token {
        let enc = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        Token::new(format!(
            "{}.{}.sig",
            enc.encode("{\"alg\":\"HS256\"}"),
            enc.encode(claims)
        ))
    }

    #[test]
    fn backend_ids_from_scp() {
        let t =
            jwt(r#"{"scp":"Actions.ExampleScope Actions.Results:ce7f54c7-61c7:ca395085-040a"}"#);
        assert_eq!(
            backend_ids(&t).unwrap(),
            ("ce7f54c7-61c7".into(), "ca395085-040a".into())
        );
        assert!(backend_ids(&jwt(r#"{"scp":"Actions.Other"}"#)).is_err());
    }

    #[test]
    fn ghes_is_not_supported() {
        assert!(supported_server("https://github.com"));
        assert!(supported_server("https://acme.ghe.com"));
        assert!(!supported_server("https://github.acme.internal"));
    }

    #[test]
    fn origin_drops_the_path() {
        assert_eq!(
            origin_of("https://results-receiver.actions.githubusercontent.com/"),
            "https://results-receiver.actions.githubusercontent.com"
        );
        assert_eq!(origin_of("http://10.0.0.2:34567/"), "http://10.0.0.2:34567");
    }
}
