//! The secret rule table: one row per format, in priority order (a specific format wins over
//! a generic assignment that covers the same bytes). `scrub --list-rules` prints it; it is
//! the one place every rule, its format and its source are written down.
//!
//! A rule runs its regex only when one of its anchor literals occurs in the text, so the
//! common case (no candidate anywhere) costs one keyword scan. An anchor must occur in every
//! match of its rule's pattern; rules share short anchors (`key`, `sk-`, `gl`) so that the
//! literals stay few enough for a vectorised (Teddy) scan. The first capture group that
//! took part in a match is what gets redacted (the whole match when there is none); the
//! rule's [`Check`] then confirms it.

use super::check::Check;

/// What must occur in a text before a rule's regex is run on it.
#[derive(Debug, Clone, Copy)]
pub enum Anchor {
    /// Any of these literals, case-sensitive.
    Literal(&'static [&'static str]),
    /// Any of these words (given in lowercase) spelt lowercase, UPPERCASE or Capitalized:
    /// `token`, `TOKEN`, `Token`, as names in code and config are written.
    Word(&'static [&'static str]),
    /// Words as [`Anchor::Word`], for a rule whose matches are a value assigned to a name
    /// that ends in one of them (`assigned_value!`): a word counts only where its name goes
    /// on to an assignment ([`assigns_after`]), so that the many words in prose and code
    /// that assign nothing (`token`, `pass`) need no search. A name in none of the three
    /// spellings (`ToKeN=…`) is then not found even beside another word on its line.
    Assigned(&'static [&'static str]),
    /// A hand-written scan, for formats with no literal of three bytes or more (Discord bot
    /// tokens, Twilio `SK…`, Entra `…Q~…`): a short literal would slow the shared scan.
    Scan(fn(&str) -> bool),
}

/// One kind of secret and how to find it.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// A stable name for the rule.
    pub id: &'static str,
    /// The redaction marker's kind: `[REDACTED:{kind}]`, and the key of the counts.
    pub kind: &'static str,
    /// Literals that gate the regex.
    pub anchor: Anchor,
    /// The regex (Rust `regex` syntax); group 1 (or the first group that matched) is the secret,
    /// or, in a pattern without groups, the match less the line breaks and blanks it begins
    /// and ends with.
    pub pattern: &'static str,
    /// The second look that rejects placeholders and look-alikes.
    pub check: Check,
    /// The format, for people.
    pub format: &'static str,
    /// Where the format is documented.
    pub source: &'static str,
}

/// Value of a `NAME = value` assignment: quoted (no whitespace inside) or bare. The name may
/// be followed by a type (`var token string = "…"`), the operator is any of `= : := ::= :::=
/// => ?= .= +=`, or a `,` before a quoted value (`setProperty("TOKEN", "…")`); an XML element
/// (`<token>…</token>`, the value on its own line or not) counts too; a value on its own
/// line is taken once that line ends, so that its end tag, a line further, is not needed.
macro_rules! assigned_value {
    () => {
        concat!(
            r#"\\?["']?\]?(?:[ \t]+(?:string|String|str|&str))?[ \t]*"#,
            r#"(?:(?::{1,3}=|=>|[?.+]=|[:=])[ \t]*(?:\\?["'`]([^"'`\\\s]+)\\?["'`]|([^\s"'`;,&|<>()\[\]{}\\]+))"#,
            r#"|,[ \t]*\\?["'`]([^"'`\\\s]+)\\?["'`]"#,
            r#"|>[ \t]*([^\s"'`<>]+)[ \t]*(?:\r?\n[ \t]*)?</|>[ \t]*\r?\n[ \t]*([^\s"'`<>]+)[ \t]*(?:\r?\n|$))"#
        )
    };
}

/// True when the name at `at` in `text` goes on to an assignment as `assigned_value!`
/// begins one: the rest of the name (`token` of `tokenValue`, `auth` of `auth_token`), a
/// closing quote or bracket, a type, then an operator, a `,` or a `>`. Looser than the
/// pattern (any quotes, a type without blanks before it): a gate, not a match.
pub fn assigns_after(text: &str, at: usize) -> bool {
    let b = text.as_bytes();
    let mut i = at;
    let skip = |i: &mut usize, f: fn(&u8) -> bool| *i += b[*i..].iter().take_while(|c| f(c)).count();
    skip(&mut i, |c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
    skip(&mut i, |c| matches!(c, b'\\' | b'"' | b'\'' | b']'));
    skip(&mut i, |c| matches!(c, b' ' | b'\t'));
    if let Some(ty) = ["string", "String", "str", "&str"].iter().find(|ty| b[i..].starts_with(ty.as_bytes())) {
        i += ty.len();
        skip(&mut i, |c| matches!(c, b' ' | b'\t'));
    }
    b.get(i).is_some_and(|c| matches!(c, b':' | b'=' | b',' | b'>' | b'?' | b'.' | b'+'))
}

/// The value of a command-line flag: quoted, or a bare word that is not another flag.
macro_rules! value_after_flag {
    () => {
        r#"(?:'([^'\n]+)'|"([^"\n]+)"|([^\s'"-][^\s'"]*))"#
    };
}

/// A token of letters and digits ends here: what follows is not one. A `_` or `-` may follow,
/// so that a word appended to a key (`…_EXAMPLE`) does not hide it.
macro_rules! alnum_end {
    () => {
        r"(?:[^A-Za-z0-9]|$)"
    };
}

/// A token character class ends here: the next character is not one of `[A-Za-z0-9_-]`.
macro_rules! token_end {
    () => {
        r"(?:[^A-Za-z0-9_-]|$)"
    };
}

/// What may begin each line of a PEM block shown by a tool: blanks, then at most 12
/// characters that are neither ASCII letters nor line breaks. That is a line number (Claude
/// Code's Read tool writes `     2→`, `cat -n` a tab, OpenCode's read `00002| `, `grep -n`
/// `12:` and `12-`, `bat` `   2 │ `, a list `2. ` or `[2] `), a diff's sign, quote or comment
/// marks (`> `, `// `, `; `), or several of them. `check::is_pem_gutter` is the same test,
/// for those who hold a key's lines until its END line comes.
macro_rules! pem_gutter {
    () => {
        r"[ \t]*[^A-Za-z\r\n]{0,12}"
    };
}

/// A line break between a PEM block's lines, real or JSON-escaped, with the blanks around it.
macro_rules! pem_line_break {
    () => {
        r"[ \t]*(?:\r?\n|\\r\\n|\\n)[ \t]*"
    };
}

const GITLEAKS: &str = "gitleaks config/gitleaks.toml (vendor docs give no format)";

/// Every rule, in priority order.
pub static RULES: &[Rule] = &[
    Rule {
        id: "private-key-pem",
        kind: "private-key",
        anchor: Anchor::Literal(&["-----BEGIN"]),
        pattern: concat!(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----",
            // A `-` is never followed by another inside the body, so that a body ends at the
            // first dashes, END or not: a search from each BEGIN reads only its own body, and
            // a text of many BEGINs without an END is read once, not once per BEGIN. Besides
            // base64, headers and blanks, a line may begin with a tool's gutter (see
            // `pem_gutter`); prose with other characters ends the body.
            r"(?:(?:[A-Za-z0-9+/=\s:,.\\→|>#*]|-[A-Za-z0-9+/=\s:,.\\→|>#*]",
            r"|(?:\r?\n|\\r\\n|\\n)[ \t]*[^A-Za-z\r\n-]{1,12})*?",
            r"-?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----",
            // Cut before its END line: the headers right after the BEGIN line (`Proc-Type:`,
            // PGP's `Version:`; a value may hold a path or `--`, not the five dashes of a
            // next BEGIN), then whole lines of base64, each with its line break (left out
            // of the redaction, see `Rule::pattern`). A line of prose after those is not
            // the key's, whatever it begins with.
            r"|(?:(?:\s|\\[nr])+",
            pem_gutter!(),
            r"[A-Za-z-]+: (?:[^\r\n\\-]|-{1,4}[^\r\n\\-]|\\[^nr])*-{0,4})*",
            r"(?:(?:\s|\\[nr])*",
            pem_gutter!(),
            r"[A-Za-z0-9+/]{16,}={0,2}[ \t]*(?:\r?\n|\\r\\n|\\n|\z))*)"
        ),
        check: Check::PemBody,
        format: "PEM block `-----BEGIN … PRIVATE KEY-----` to its END line (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP), or to the end of its base64 when cut",
        source: "RFC 7468; OpenSSH PROTOCOL.key; RFC 4880 §6.2",
    },
    Rule {
        // A text cut to its tail (tool output, a raw line cut in the middle) can keep the
        // last lines of a key without its BEGIN line. Whole lines of base64 up to the END
        // line are that key's body: lines of 16 characters or more, and the last one,
        // short, then an OpenPGP armor's checksum line (`=` and 4 characters). The search
        // needs the END line, so prose before the body is left alone, and a whole block is
        // the rule above's.
        id: "private-key-pem-tail",
        kind: "private-key",
        anchor: Anchor::Literal(&["-----END"]),
        pattern: concat!(
            r"(?:\A|\n|\\n)[ \t]*(?:",
            pem_gutter!(),
            r"[A-Za-z0-9+/=]{16,}",
            pem_line_break!(),
            r")*",
            pem_gutter!(),
            r"[A-Za-z0-9+/=]+(?:",
            pem_line_break!(),
            pem_gutter!(),
            r"=[A-Za-z0-9+/]{4})?",
            pem_line_break!(),
            pem_gutter!(),
            r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        ),
        check: Check::PemBody,
        format: "the base64 lines of a PEM private key up to its END line, where a cut left out its BEGIN line",
        source: "RFC 7468; RFC 4880 §6.2",
    },
    Rule {
        id: "age-secret-key",
        kind: "private-key",
        anchor: Anchor::Word(&["secret"]),
        pattern: concat!(r"(AGE-SECRET-KEY-1[0-9A-Z]{58})", alnum_end!()),
        check: Check::Format,
        format: "`AGE-SECRET-KEY-1` + 58 Bech32 characters",
        source: "https://age-encryption.org/v1",
    },
    Rule {
        id: "gcp-service-account-base64",
        kind: "gcp-service-account",
        anchor: Anchor::Literal(&["ewogICJ0eXBl", "eyJ"]),
        pattern: r"((?:ewogICJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIs|eyJ0eXBlIjoic2VydmljZV9hY2NvdW50Ii|eyJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCI)[A-Za-z0-9+/]*={0,2})",
        check: Check::Format,
        format: "base64 of a service-account key file (`{\"type\": \"service_account\", …`)",
        source: "https://cloud.google.com/iam/docs/keys-create-delete",
    },
    Rule {
        id: "gcp-private-key-id",
        kind: "gcp-service-account",
        anchor: Anchor::Word(&["key"]),
        pattern: r#"private_key_id\\?"[ \t]*:[ \t]*\\?"([0-9a-f]{40})\\?""#,
        check: Check::Format,
        format: "`\"private_key_id\": \"<40 hex>\"` in a service-account key file (its `private_key` is a PEM block)",
        source: "https://cloud.google.com/iam/docs/keys-create-delete",
    },
    Rule {
        id: "github-classic",
        kind: "github-token",
        anchor: Anchor::Literal(&["ghp_", "gho_"]),
        pattern: r"(gh[po]_[A-Za-z0-9]{36,})",
        check: Check::Crc32Base62,
        format: "`ghp_` (personal) / `gho_` (OAuth) + 30 base62 + 6-character base62 CRC32 checksum",
        source: "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    },
    Rule {
        id: "github-app",
        kind: "github-token",
        anchor: Anchor::Literal(&["ghu_", "ghs_", "ghr_"]),
        pattern: r"(gh[usr]_[A-Za-z0-9]{36,})",
        check: Check::Crc32Base62,
        format: "`ghu_` (user-to-server) / `ghs_` (installation) / `ghr_` (refresh) + 30 base62 + CRC32 checksum",
        source: "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    },
    Rule {
        id: "github-fine-grained",
        kind: "github-token",
        anchor: Anchor::Literal(&["github_pat_"]),
        pattern: concat!(r"(github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})", alnum_end!()),
        check: Check::Format,
        format: "`github_pat_` + 22 base62 + `_` + 59 base62",
        source: "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/about-authentication-to-github#githubs-token-formats",
    },
    Rule {
        id: "gitlab-token",
        kind: "gitlab-token",
        anchor: Anchor::Literal(&[
            "glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glimt-", "glagent-", "glsoat-", "glffct-", "glft-", "gloas-", "GR1348941",
        ]),
        pattern: r"((?:glpat|gldt|glptt|glrt|glcbt|glimt|glagent|glsoat|glffct|glft|gloas)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{7,9})?|GR1348941[A-Za-z0-9_-]{20,})",
        check: Check::Format,
        format: "`glpat-` (personal), `gldt-` (deploy), `glptt-` (trigger), `glrt-`/`GR1348941` (runner), `glcbt-`, `glimt-`, `glagent-`, `glsoat-`, `glffct-`, `glft-`, `gloas-` + 20+ characters",
        source: "https://docs.gitlab.com/security/tokens/#token-prefixes",
    },
    Rule {
        id: "slack-token",
        kind: "slack-token",
        anchor: Anchor::Literal(&["xox"]),
        pattern: r"((?:xoxe\.)?xox[abeoprs]-[0-9A-Za-z]+(?:-[0-9A-Za-z]+)*)",
        check: Check::SlackToken,
        format: "`xoxb-` (bot), `xoxp-` (user), `xoxa-`/`xoxr-` (workspace), `xoxs-`/`xoxo-` (legacy), `xoxe.xoxp-`/`xoxe-` (configuration, rotating), dash-separated parts of which one looks random",
        source: "https://api.slack.com/authentication/token-types",
    },
    Rule {
        id: "slack-app-token",
        kind: "slack-token",
        anchor: Anchor::Literal(&["xapp-"]),
        pattern: r"(xapp-[0-9]-[A-Z0-9]+-[0-9]+-[A-Za-z0-9]+)",
        check: Check::Format,
        format: "`xapp-<n>-<app id>-<n>-<hex>` (app-level token)",
        source: "https://api.slack.com/authentication/token-types",
    },
    Rule {
        id: "slack-webhook",
        kind: "slack-webhook",
        anchor: Anchor::Literal(&["hooks"]),
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{20,})",
        check: Check::Format,
        format: "`https://hooks.slack.com/services/T…/B…/<secret>` (the path is the credential)",
        source: "https://api.slack.com/messaging/webhooks",
    },
    Rule {
        id: "stripe-key",
        kind: "stripe-key",
        anchor: Anchor::Literal(&["_live_", "_test_"]),
        pattern: concat!(r"((?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,247})", alnum_end!()),
        check: Check::Format,
        format: "`sk_live_`/`sk_test_` (secret), `rk_live_`/`rk_test_` (restricted) + 20–247 base62",
        source: "https://docs.stripe.com/keys",
    },
    Rule {
        id: "stripe-webhook-secret",
        kind: "stripe-key",
        anchor: Anchor::Literal(&["whsec_"]),
        pattern: r"(whsec_[A-Za-z0-9+/]{32,}={0,2})",
        check: Check::Format,
        format: "`whsec_` + 32+ base64 (webhook signing secret)",
        source: "https://docs.stripe.com/webhooks#verify-webhook-signatures-with-official-libraries",
    },
    Rule {
        id: "anthropic-key",
        kind: "anthropic-key",
        anchor: Anchor::Literal(&["sk-"]),
        pattern: r"(sk-ant-[a-z]+[0-9]{2}-[A-Za-z0-9_-]{32,})",
        check: Check::Format,
        format: "`sk-ant-api03-` (API), `sk-ant-admin01-` (admin), `sk-ant-oat01-` (OAuth) + 32+ characters",
        source: "https://docs.anthropic.com/en/api/overview#authentication",
    },
    Rule {
        id: "openai-key",
        kind: "openai-key",
        anchor: Anchor::Literal(&["sk-"]),
        pattern: r"(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{32,})",
        check: Check::Format,
        format: "`sk-proj-` (project), `sk-svcacct-` (service account), `sk-admin-`, `sk-None-` + 32+ characters",
        source: GITLEAKS,
    },
    Rule {
        id: "openai-legacy-key",
        kind: "openai-key",
        anchor: Anchor::Literal(&["sk-"]),
        pattern: r"(sk-[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,})",
        check: Check::Format,
        format: "`sk-` + characters around `T3BlbkFJ` (base64 of `OpenAI`)",
        source: GITLEAKS,
    },
    Rule {
        id: "google-api-key",
        kind: "google-api-key",
        anchor: Anchor::Literal(&["AIza"]),
        pattern: r"(AIza[0-9A-Za-z_-]{35})",
        check: Check::Format,
        format: "`AIza` + 35 characters",
        source: "https://cloud.google.com/docs/authentication/api-keys",
    },
    Rule {
        id: "google-oauth-client-secret",
        kind: "google-oauth",
        anchor: Anchor::Literal(&["GOCSPX-"]),
        pattern: r"(GOCSPX-[A-Za-z0-9_-]{28})",
        check: Check::Format,
        format: "`GOCSPX-` + 28 characters (OAuth client secret)",
        source: "https://developers.google.com/identity/protocols/oauth2",
    },
    Rule {
        id: "google-oauth-token",
        kind: "google-oauth",
        anchor: Anchor::Literal(&["ya29.", "1//0"]),
        pattern: r"(?:(ya29\.[0-9A-Za-z_-]{20,})|(?:^|[^0-9A-Za-z/])(1//0[0-9A-Za-z_-]{40,}))",
        check: Check::Format,
        format: "`ya29.` access token, `1//0` refresh token",
        source: "https://developers.google.com/identity/protocols/oauth2",
    },
    Rule {
        id: "aws-access-key-id",
        kind: "aws-access-key",
        anchor: Anchor::Literal(&["AKIA", "ASIA", "ABIA", "ACCA"]),
        pattern: r"((?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?:[^A-Z2-7]|$)",
        check: Check::Format,
        format: "`AKIA` (long-term), `ASIA` (temporary), `ABIA`, `ACCA` + 16 base32",
        source: "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids",
    },
    Rule {
        id: "aws-secret-access-key",
        kind: "aws-secret-key",
        anchor: Anchor::Word(&["secret"]),
        pattern: r#"(?i)(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)\\?["']?[ \t]*(?::=|=>|[:=])[ \t]*\\?["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)"#,
        check: Check::Format,
        format: "40 base64 characters assigned to `aws_secret_access_key` / `SecretAccessKey`",
        source: "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html",
    },
    Rule {
        id: "aws-session-token",
        kind: "aws-session-token",
        anchor: Anchor::Word(&["token"]),
        pattern: r#"(?i)session[_-]?token\\?["']?[ \t]*(?::=|=>|[:=])[ \t]*\\?["']?([A-Za-z0-9/+=]{100,})"#,
        check: Check::Format,
        format: "100+ base64 characters assigned to `aws_session_token` / `SessionToken`",
        source: "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html",
    },
    Rule {
        id: "signed-url",
        kind: "signed-url",
        anchor: Anchor::Literal(&["X-Amz-", "X-Goog-", "sig="]),
        pattern: r"(?:X-Amz-Signature=([0-9a-f]{64})|X-Amz-Security-Token=([A-Za-z0-9%/+=_-]{40,})|X-Goog-Signature=([0-9a-f]{64,})|[?&]sig=([A-Za-z0-9%+/=]{30,}))",
        check: Check::Format,
        format: "the signature (and session token) of an S3 / GCS presigned URL or an Azure SAS (`sig=`)",
        source: "https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html; https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview",
    },
    Rule {
        id: "azure-storage-key",
        kind: "azure-storage-key",
        anchor: Anchor::Word(&["key"]),
        pattern: r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)",
        check: Check::Format,
        format: "`AccountKey=` + 88 base64 in a storage connection string",
        source: "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string",
    },
    Rule {
        id: "azure-shared-access-key",
        kind: "azure-sas-key",
        anchor: Anchor::Word(&["key"]),
        pattern: r"(?i)SharedAccessKey=([A-Za-z0-9+/]{42,43}=)",
        check: Check::Format,
        format: "`SharedAccessKey=` + 44 base64 (Service Bus, Event Hubs, IoT Hub)",
        source: "https://learn.microsoft.com/en-us/azure/service-bus-messaging/service-bus-sas",
    },
    Rule {
        id: "azure-client-secret",
        kind: "azure-client-secret",
        anchor: Anchor::Scan(has_q_tilde),
        pattern: r"([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|$)",
        check: Check::Format,
        format: "Entra ID (Azure AD) client secret: 3 characters, a digit, `Q~`, 31–34 characters",
        source: "https://github.com/microsoft/security-utilities",
    },
    Rule {
        id: "azure-devops-pat",
        kind: "azure-devops-token",
        anchor: Anchor::Literal(&["AZDO"]),
        pattern: concat!(r"([A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})", alnum_end!()),
        check: Check::Format,
        format: "84-character identifiable PAT with the `AZDO` signature at 76–79",
        source: "https://learn.microsoft.com/en-us/azure/devops/organizations/accounts/use-personal-access-tokens-to-authenticate",
    },
    Rule {
        id: "npm-token",
        kind: "npm-token",
        anchor: Anchor::Literal(&["npm_"]),
        pattern: r"(npm_[A-Za-z0-9]{36,})",
        check: Check::Crc32Base62,
        format: "`npm_` + 30 base62 + 6-character base62 CRC32 checksum",
        source: "https://github.blog/2021-09-23-announcing-npms-new-access-token-format/",
    },
    Rule {
        id: "npmrc-auth",
        kind: "npm-token",
        anchor: Anchor::Literal(&["_auth", "_password"]),
        pattern: r#"(?:^|[:\s])(?:_authToken|_auth|_password)[ \t]*=[ \t]*["']?([^\s"']+)"#,
        check: Check::Assigned(8),
        format: "`_authToken=`, `_auth=`, `_password=` in `.npmrc`",
        source: "https://docs.npmjs.com/cli/configuring-npm/npmrc#auth-related-configuration",
    },
    Rule {
        id: "pypi-token",
        kind: "pypi-token",
        anchor: Anchor::Literal(&["pypi-"]),
        pattern: r"(pypi-AgE[A-Za-z0-9_-]{50,})",
        check: Check::Format,
        format: "`pypi-AgE…` macaroon (`pypi-AgEIcHlwaS5vcmc…` for pypi.org)",
        source: "https://pypi.org/help/#apitoken",
    },
    Rule {
        id: "huggingface-token",
        kind: "huggingface-token",
        anchor: Anchor::Literal(&["hf_", "api_org_"]),
        pattern: concat!(r"((?:hf|api_org)_[A-Za-z]{34})", alnum_end!()),
        check: Check::RandomLetters,
        format: "`hf_` (user) / `api_org_` (organisation) + 34 random letters",
        source: "https://huggingface.co/docs/hub/security-tokens",
    },
    Rule {
        id: "twilio-api-key",
        kind: "twilio-key",
        anchor: Anchor::Scan(has_twilio_sid),
        pattern: r"\b(SK[0-9a-f]{32})\b",
        check: Check::Format,
        format: "`SK` + 32 lowercase hex (API key SID with its secret nearby)",
        source: "https://www.twilio.com/docs/iam/api-keys",
    },
    Rule {
        id: "twilio-auth-token",
        kind: "twilio-key",
        anchor: Anchor::Word(&["token"]),
        pattern: r#"(?i)twilio[a-z_]*?(?:auth)?[_-]?token\\?["']?[ \t]*(?::=|=>|[:=])[ \t]*\\?["']?([0-9a-f]{32})\b"#,
        check: Check::Format,
        format: "32 hex assigned to a `TWILIO_…AUTH_TOKEN` name",
        source: "https://www.twilio.com/docs/iam/credentials/api",
    },
    Rule {
        id: "sendgrid-key",
        kind: "sendgrid-key",
        anchor: Anchor::Literal(&["SG."]),
        pattern: r"(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})",
        check: Check::Format,
        format: "`SG.` + 22 + `.` + 43 characters",
        source: "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
    },
    Rule {
        id: "discord-webhook",
        kind: "discord-webhook",
        anchor: Anchor::Literal(&["hooks"]),
        pattern: r"(?i)discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([A-Za-z0-9_-]{60,68})",
        check: Check::Format,
        format: "`discord.com/api/webhooks/<id>/<68-character token>`",
        source: "https://discord.com/developers/docs/resources/webhook",
    },
    Rule {
        id: "discord-bot-token",
        kind: "discord-token",
        anchor: Anchor::Scan(has_dotted_token),
        pattern: concat!(r"\b([MNO][A-Za-z0-9_-]{22,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})", token_end!()),
        check: Check::DiscordId,
        format: "base64(user id) `.` 6 characters `.` 27–38 characters; the first part must decode to digits",
        source: "https://discord.com/developers/docs/reference#authentication",
    },
    Rule {
        id: "telegram-bot-token",
        kind: "telegram-bot-token",
        anchor: Anchor::Literal(&[":AA"]),
        pattern: r"([0-9]{5,16}:AA[A-Za-z0-9_-]{33})",
        check: Check::Format,
        format: "`<bot id>:AA` + 33 characters",
        source: "https://core.telegram.org/bots/api#authorizing-your-bot",
    },
    Rule {
        id: "digitalocean-token",
        kind: "digitalocean-token",
        anchor: Anchor::Literal(&["_v1_"]),
        pattern: concat!(r"(do[opr]_v1_[a-f0-9]{64})", alnum_end!()),
        check: Check::Format,
        format: "`dop_v1_` (personal), `doo_v1_` (OAuth), `dor_v1_` (refresh) + 64 hex",
        source: "https://docs.digitalocean.com/reference/api/create-personal-access-token/",
    },
    Rule {
        id: "shopify-token",
        kind: "shopify-token",
        anchor: Anchor::Literal(&["shp"]),
        pattern: concat!(r"(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})", alnum_end!()),
        check: Check::Format,
        format: "`shpat_`, `shpca_`, `shppa_`, `shpss_` + 32 hex",
        source: "https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens",
    },
    Rule {
        id: "jwt",
        kind: "jwt",
        anchor: Anchor::Literal(&["eyJ"]),
        pattern: r"(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,})",
        check: Check::Jwt,
        format: "three base64url segments, the first decoding to a JSON header with `alg`/`typ`",
        source: "RFC 7519",
    },
    Rule {
        id: "vault-token",
        kind: "vault-token",
        anchor: Anchor::Literal(&["hvs.", "hvb.", "hvr."]),
        pattern: r"(hv[sbr]\.[A-Za-z0-9_-]{24,})",
        check: Check::Format,
        format: "`hvs.` (service), `hvb.` (batch), `hvr.` (recovery) + 24+ characters",
        source: "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
    },
    Rule {
        id: "databricks-token",
        kind: "databricks-token",
        anchor: Anchor::Literal(&["dapi"]),
        pattern: concat!(r"(dapi[0-9a-f]{32}(?:-[0-9])?)", alnum_end!()),
        check: Check::Format,
        format: "`dapi` + 32 hex",
        source: "https://docs.databricks.com/en/dev-tools/auth/pat.html",
    },
    Rule {
        id: "postman-key",
        kind: "postman-key",
        anchor: Anchor::Literal(&["PMAK-"]),
        pattern: concat!(r"(PMAK-[0-9a-f]{24}-[0-9a-f]{34})", alnum_end!()),
        check: Check::Format,
        format: "`PMAK-` + 24 hex + `-` + 34 hex",
        source: "https://learning.postman.com/docs/developer/postman-api/authentication/",
    },
    Rule {
        id: "grafana-token",
        kind: "grafana-token",
        anchor: Anchor::Literal(&["glsa_", "glc_"]),
        pattern: r"(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        check: Check::Format,
        format: "`glsa_` service-account token, `glc_` Grafana Cloud access-policy token",
        source: "https://grafana.com/docs/grafana/latest/administration/service-accounts/",
    },
    Rule {
        id: "atlassian-token",
        kind: "atlassian-token",
        anchor: Anchor::Literal(&["ATATT3"]),
        pattern: r"(ATATT3[A-Za-z0-9_=-]{180,})",
        check: Check::Format,
        format: "`ATATT3` + 180+ characters (Atlassian API token)",
        source: "https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/",
    },
    Rule {
        id: "sentry-token",
        kind: "sentry-token",
        anchor: Anchor::Literal(&["sntry"]),
        pattern: r"(sntrys_eyJ[A-Za-z0-9+/=_-]{60,}|sntryu_[a-f0-9]{64})",
        check: Check::Format,
        format: "`sntrys_` (organisation, base64 JSON) / `sntryu_` (user, 64 hex)",
        source: "https://docs.sentry.io/account/auth-tokens/",
    },
    Rule {
        id: "linear-key",
        kind: "linear-key",
        anchor: Anchor::Literal(&["lin_api_"]),
        pattern: concat!(r"(lin_api_[A-Za-z0-9]{40})", alnum_end!()),
        check: Check::Format,
        format: "`lin_api_` + 40 base62",
        source: "https://linear.app/developers/graphql#personal-api-keys",
    },
    Rule {
        id: "doppler-token",
        kind: "doppler-token",
        anchor: Anchor::Literal(&["dp."]),
        pattern: concat!(r"(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})", alnum_end!()),
        check: Check::Format,
        format: "`dp.pt.` (personal), `dp.st.` (service), `dp.sa.`, `dp.ct.`, `dp.scim.`, `dp.audit.` + 40–44 base62",
        source: "https://docs.doppler.com/reference/auth-token-formats",
    },
    Rule {
        id: "newrelic-key",
        kind: "newrelic-key",
        anchor: Anchor::Literal(&["NRAK-"]),
        pattern: concat!(r"(NRAK-[A-Z0-9]{27})", alnum_end!()),
        check: Check::Format,
        format: "`NRAK-` + 27 upper-case base36 (user API key)",
        source: "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
    },
    Rule {
        id: "pulumi-token",
        kind: "pulumi-token",
        anchor: Anchor::Literal(&["pul-"]),
        pattern: concat!(r"(pul-[a-f0-9]{40})", alnum_end!()),
        check: Check::Format,
        format: "`pul-` + 40 hex",
        source: "https://www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens/",
    },
    Rule {
        id: "supabase-token",
        kind: "supabase-token",
        anchor: Anchor::Literal(&["sbp_"]),
        pattern: concat!(r"(sbp_[a-f0-9]{40})", alnum_end!()),
        check: Check::Format,
        format: "`sbp_` + 40 hex (personal access token)",
        source: "https://supabase.com/docs/reference/cli/supabase-login",
    },
    Rule {
        id: "airtable-token",
        kind: "airtable-token",
        anchor: Anchor::Scan(has_airtable_pat),
        pattern: concat!(r"(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})", alnum_end!()),
        check: Check::Format,
        format: "`pat` + 14 base62 + `.` + 64 hex (personal access token)",
        source: "https://airtable.com/developers/web/guides/personal-access-tokens",
    },
    Rule {
        id: "harness-token",
        kind: "harness-token",
        anchor: Anchor::Literal(&["pat.", "sat."]),
        pattern: concat!(r"((?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})", alnum_end!()),
        check: Check::Format,
        format: "`pat.` (personal) / `sat.` (service account) + account id + `.` + 24 + `.` + 20 characters",
        source: "https://developer.harness.io/docs/platform/automation/api/add-and-manage-api-keys/",
    },
    Rule {
        id: "mapbox-token",
        kind: "mapbox-token",
        anchor: Anchor::Literal(&["pk.", "sk.", "tk."]),
        pattern: concat!(r"\b((?:pk|sk|tk)\.(?:eyJ[A-Za-z0-9_-]{20,}|[a-z0-9]{60})\.[A-Za-z0-9_-]{22})", token_end!()),
        check: Check::Format,
        format: "`pk.` (public), `sk.` (secret), `tk.` (temporary) + base64url JSON + `.` + 22 characters",
        source: "https://docs.mapbox.com/accounts/guides/tokens/",
    },
    Rule {
        id: "square-token",
        kind: "square-token",
        anchor: Anchor::Literal(&["sq0atp-", "sq0csp-", "EAAA"]),
        pattern: concat!(r"(sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43}|EAAA[0-9A-Za-z_-]{60})", token_end!()),
        check: Check::Format,
        format: "`EAAA…` / `sq0atp-` access token, `sq0csp-` application secret",
        source: "https://developer.squareup.com/docs/build-basics/access-tokens",
    },
    Rule {
        id: "sonar-token",
        kind: "sonar-token",
        anchor: Anchor::Literal(&["squ_", "sqp_", "sqa_"]),
        pattern: concat!(r"(sq[upa]_[0-9a-f]{40})", alnum_end!()),
        check: Check::Format,
        format: "`squ_` (user), `sqp_` (project analysis), `sqa_` (global analysis) + 40 hex",
        source: "https://docs.sonarsource.com/sonarqube-server/latest/user-guide/managing-tokens/",
    },
    Rule {
        id: "flyio-token",
        kind: "flyio-token",
        anchor: Anchor::Literal(&["fo1_", "fm1a_", "fm1r_", "fm2_"]),
        pattern: r"(fo1_[A-Za-z0-9_-]{39,43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
        check: Check::Format,
        format: "`fo1_` (OAuth), `fm1a_`/`fm1r_`/`fm2_` macaroons (`FlyV1 fm2_…`)",
        source: GITLEAKS,
    },
    Rule {
        id: "sidekiq-secret",
        kind: "sidekiq-secret",
        anchor: Anchor::Word(&["contribsys"]),
        pattern: concat!(
            r#"(?i)contribsys(?:__|\.)com[A-Za-z0-9_]*\\?["']?(?:[ \t]+(?:string|str))?[ \t]*(?:(?::{1,3}=|=>|[?.+]=|[:=,>])[ \t]*(?:\r?\n[ \t]*)?)?"#,
            r#"\\?["'`]?([a-f0-9]{8}:[a-f0-9]{8})(?:[^a-f0-9]|$)"#
        ),
        check: Check::Format,
        format: "`user:password` (8 hex each) given to `BUNDLE_ENTERPRISE__CONTRIBSYS__COM` / `BUNDLE_GEMS__CONTRIBSYS__COM` or `bundle config enterprise.contribsys.com`",
        source: "https://github.com/sidekiq/sidekiq/wiki/Sidekiq-Pro-and-Enterprise#bundler",
    },
    Rule {
        id: "vendor-prefixed-token",
        kind: "api-token",
        anchor: Anchor::Literal(&["ops_eyJ", "sgp_", "p8e-", "LTAI", "ABSK", "s-s4t2", "webhookb2/"]),
        pattern: concat!(
            r"(ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}|p8e-[A-Za-z0-9]{32}|LTAI[A-Za-z0-9]{20}",
            r"|ABSK[A-Za-z0-9+/]{109,269}={0,2}|s-s4t2(?:ud|af)-[a-f0-9]{64}",
            r"|webhook\.office\.com/webhookb2/[a-z0-9-]{36}@[a-z0-9-]{36}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36})",
            alnum_end!()
        ),
        check: Check::Format,
        format: "1Password service account `ops_eyJ…`, Sourcegraph `sgp_`, Adobe `p8e-`, Alibaba `LTAI`, Amazon Bedrock `ABSK`, 42 `s-s4t2ud-`, a Microsoft Teams incoming-webhook URL",
        source: GITLEAKS,
    },
    Rule {
        id: "mysql-password-flag",
        kind: "password",
        anchor: Anchor::Literal(&["mysql", "mariadb"]),
        pattern: concat!(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b",
            r"[^\n|;&]{0,256}?[ \t]-p",
            value_after_flag!()
        ),
        check: Check::Password,
        format: "`mysql -p<password>` (the password joined to `-p`; `-p` alone prompts)",
        source: "https://dev.mysql.com/doc/refman/8.4/en/connection-options.html#option_general_password",
    },
    Rule {
        id: "login-password-flag",
        kind: "password",
        anchor: Anchor::Literal(&["login"]),
        pattern: concat!(
            r"\b(?:docker|podman|buildah|nerdctl|skopeo|oras|helm[ \t]+registry|crane[ \t]+auth|cf|az[ \t]+acr)[ \t]+login\b",
            r"[^\n|;&]{0,256}?[ \t](?:-p|--password)(?:[ \t]+|=)?",
            value_after_flag!()
        ),
        check: Check::Password,
        format: "`docker login -p <password>`, `helm registry login --password=<password>`, `podman login -p …`",
        source: "https://docs.docker.com/reference/cli/docker/login/",
    },
    Rule {
        id: "curl-user-password",
        kind: "password",
        anchor: Anchor::Literal(&["curl"]),
        pattern: concat!(
            r"\bcurl\b[^\n|;&]{0,256}?[ \t](?:-u[ \t]*|--user(?:[ \t]+|=))",
            r#"(?:'[^':\n]*:([^'\n]+)'|"[^":\n]*:([^"\n]+)"|[^\s:'"]*:([^\s'"]+))"#
        ),
        check: Check::Password,
        format: "`curl -u user:password`, `curl --user=user:password` (any password, letters alone included)",
        source: "https://curl.se/docs/manpage.html#-u",
    },
    Rule {
        id: "netrc-password",
        kind: "password",
        // With the space: every canonical event's `visibility` names "machine".
        anchor: Anchor::Literal(&["machine ", "login "]),
        pattern: r"\b(?:machine|login)[ \t]+\S+(?:\s+(?:login|account|machine)[ \t]+\S+){0,3}\s+password[ \t]+(\S+)",
        check: Check::Assigned(6),
        format: "`machine host login user password secret` in `.netrc` / `_netrc` (one line or several)",
        source: "https://everything.curl.dev/usingcurl/netrc.html",
    },
    Rule {
        id: "docker-config-auth",
        kind: "registry-auth",
        anchor: Anchor::Word(&["auth"]),
        pattern: r#"\bauth\\?"[ \t]*:[ \t]*\\?"([A-Za-z0-9+/]{8,}={0,2})\\?""#,
        check: Check::BasicAuth,
        format: "`\"auth\": \"<base64 of user:password>\"` in a Docker / Podman `config.json` or `auth.json`",
        source: "https://docs.docker.com/reference/cli/docker/login/#credential-stores",
    },
    Rule {
        id: "cookie-header",
        kind: "session-cookie",
        anchor: Anchor::Word(&["cookie"]),
        pattern: r#"(?i)\b(?:set-)?cookie\\?["']?[ \t]*:[ \t]*\\?["']?([^\r\n"'\\]*[^\s"'\\])"#,
        check: Check::Assigned(8),
        format: "the value of a `Cookie:` / `Set-Cookie:` header (session cookies are bearer credentials)",
        source: "RFC 6265 §4",
    },
    Rule {
        id: "curl-cookie",
        kind: "session-cookie",
        anchor: Anchor::Literal(&["curl"]),
        pattern: concat!(
            r"\bcurl\b[^\n|;&]{0,256}?[ \t](?:-b|--cookie)[ \t]+",
            r#"(?:'([^'\n]*=[^'\n]*)'|"([^"\n]*=[^"\n]*)"|([^\s'"=]+=[^\s'"]+))"#
        ),
        check: Check::Assigned(8),
        format: "`curl -b 'name=value'`, `curl --cookie \"…\"`",
        source: "https://curl.se/docs/manpage.html#-b",
    },
    Rule {
        id: "session-cookie",
        kind: "session-cookie",
        // Each with its `=`: every canonical event names its `sessionId`, and an anchor on
        // "session" alone would send every line down the slow path.
        anchor: Anchor::Literal(&[
            "_session=",
            "_session_id=",
            "SESSID=",
            "SessionId=",
            "connect.sid=",
            "sessionid=",
            "session_token=",
            "session-token=",
            "__Secure-",
            "__Host-",
            "_token=",
        ]),
        pattern: concat!(
            r"(?:_gitlab_session|_session_id|[A-Za-z0-9]*_session|PHPSESSID|JSESSIONID|ASP\.NET_SessionId|connect\.sid",
            r"|sessionid|session_token|next-auth\.session-token|remember_[a-z]+_token|__Host-[A-Za-z0-9_.-]+|__Secure-[A-Za-z0-9_.-]+)",
            r#"=([^;\s"'\\,&]{16,})"#
        ),
        check: Check::Assigned(16),
        format: "a session cookie by its name (`_gitlab_session=…`, `PHPSESSID=…`, `connect.sid=…`, `__Secure-…=…`)",
        source: "https://owasp.org/www-community/attacks/Session_hijacking_attack",
    },
    Rule {
        id: "url-credentials",
        kind: "url-credentials",
        anchor: Anchor::Literal(&["://"]),
        pattern: r#"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:@/?#"'<>\[\]]{0,128}:([^\s/?#"'<>]{1,256})@[A-Za-z0-9\[]"#,
        check: Check::Password,
        format: "the password of `scheme://user:password@host` or `scheme://:password@host` (git remotes, database and broker URLs)",
        source: "RFC 3986 §3.2.1",
    },
    Rule {
        id: "connection-string-password",
        kind: "connection-string",
        anchor: Anchor::Word(&["pass", "pwd"]),
        pattern: r#"(?i)(?:;[ \t]*(?:password|pwd)[ \t]*=[ \t]*([^;"'\r\n]+)|\b(?:password|pwd)[ \t]*=[ \t]*([^;"'\r\n]+);)"#,
        check: Check::Password,
        format: "`Password=`/`Pwd=` inside a `key=value;` connection string (ADO.NET, ODBC, JDBC)",
        source: "https://learn.microsoft.com/en-us/dotnet/framework/data/adonet/connection-string-syntax",
    },
    Rule {
        id: "authorization-header",
        kind: "authorization-header",
        anchor: Anchor::Word(&["authorization"]),
        pattern: r#"(?i)\b(?:proxy-)?authorization\\?["']?[ \t]*:[ \t]*\\?["']?(?:(?:bearer|basic|token|bot|apikey|api-key|key|sso-key|otp|negotiate|ntlm)[ \t]+)?([^\s"',;()\\]+)"#,
        check: Check::Assigned(8),
        format: "the credential of an `Authorization:` / `Proxy-Authorization:` header (Bearer, Basic, token, Bot, …)",
        source: "RFC 9110 §11.6.2",
    },
    Rule {
        id: "api-key-header",
        kind: "authorization-header",
        anchor: Anchor::Word(&["key", "token"]),
        pattern: r#"(?i)\b(?:x-api-key|api-key|x-auth-token|private-token|x-goog-api-key|x-access-token|ocp-apim-subscription-key|x-functions-key)\\?["']?[ \t]*:[ \t]*\\?["']?([^\s"',;\\]+)"#,
        check: Check::Assigned(8),
        format: "the value of an API-key header (`X-Api-Key`, `api-key`, `PRIVATE-TOKEN`, `X-Goog-Api-Key`, …)",
        source: "https://docs.gitlab.com/api/rest/authentication/; https://learn.microsoft.com/en-us/azure/ai-services/openai/reference",
    },
    Rule {
        id: "cli-user-password",
        kind: "password",
        anchor: Anchor::Literal(&["-u ", "--user"]),
        pattern: r#"(?:^|\s)(?:-u|--user)[ \t]+["']?[^\s:"']+:([^\s"']+)"#,
        check: Check::Assigned(4),
        format: "`curl -u user:password`, `--user user:password`",
        source: "https://curl.se/docs/manpage.html#-u",
    },
    Rule {
        id: "cli-secret-flag",
        kind: "secret",
        anchor: Anchor::Word(&["pass", "token", "key", "secret"]),
        pattern: r#"(?i)(?:^|\s)--(?:password|passwd|token|api-key|apikey|secret|client-secret|auth-token|access-token)(?:=|[ \t]+)["']?([^\s"']+)"#,
        check: Check::Assigned(8),
        format: "`--password X`, `--token=X`, `--api-key X`, … on a command line",
        source: "secret-looking command-line flags (this project)",
    },
    Rule {
        id: "vendor-assignment",
        kind: "secret",
        anchor: Anchor::Assigned(&["token", "key", "secret", "pass", "auth", "login"]),
        pattern: concat!(
            r"(?:^|[^A-Za-z])(?i:adafruit|adobe|airtable|algolia|alibaba|artifactory|asana|atlassian|authress|beamer|bitbucket|bittrex",
            r"|clickhouse|clojars|cloudflare|codecov|coinbase|confluent|contentful|datadog|discord|droneci|dropbox|duffel|dynatrace",
            r"|easypost|etsy|facebook|fastly|finicity|finnhub|flickr|flutterwave|frameio|freshbooks|gitter|gocardless|harness|heroku",
            r"|hubspot|intercom|jfrog|kraken|kucoin|launchdarkly|linear|linkedin|looker|mailchimp|mailgun|mapbox|mattermost|maxmind",
            r"|messagebird|netlify|nytimes|okta|plaid|planetscale|prefect|rapidapi|readme|rubygems|scalingo|sendbird|sendinblue",
            r"|settlemint|shippo|snyk|sonar|squarespace|sumo|travis|trello|twitch|twitter|typeform|yandex|zendesk)",
            r"[A-Za-z0-9_.-]{0,24}?(?i:token|key|secret|password|passwd|pass|pwd|auth|login|credentials?)",
            assigned_value!()
        ),
        check: Check::VendorAssigned,
        format: "a value assigned to a name that names a service and a secret (`CONFLUENT_TOKEN=…`, `etsyKey: …`, `SONAR_LOGIN=…`): 16+ characters that are not code, a path or a word",
        source: GITLEAKS,
    },
    Rule {
        id: "password-assignment",
        kind: "password",
        anchor: Anchor::Assigned(&["pass", "pwd"]),
        pattern: concat!(
            r"(?:(?i:passw(?:or)?d|passphrase)|(?:^|[^A-Za-z])(?i:pass|pwd)|(?-i:[a-z]P)(?i:ass|wd))",
            assigned_value!()
        ),
        check: Check::Assigned(6),
        format: "`NAME=value`, `NAME: value`, `\"name\": \"value\"` where NAME ends in password/passwd/pass/pwd/passphrase and the value looks like a secret",
        source: "secret-looking assignments (this project)",
    },
    Rule {
        id: "secret-assignment",
        kind: "secret",
        anchor: Anchor::Assigned(&["secret", "token", "key", "credential"]),
        pattern: concat!(
            r"(?i:secret(?:[_.-]?(?:access[_.-]?)?key)?|token|(?:api|access|private|signing|encryption|master|auth|client|app|account|service)[_.-]?key|credentials?)",
            assigned_value!()
        ),
        check: Check::Assigned(8),
        format: "`NAME=value` and the like where NAME ends in secret/token/api_key/access_key/private_key/…/credentials and the value looks like a secret",
        source: "secret-looking assignments (this project)",
    },
];

/// The anchor of Discord bot tokens: a `.`, 6 token characters, a `.`, with 22+ token
/// characters before it. `memchr` over dots keeps this cheap on ordinary text.
pub fn has_dotted_token(s: &str) -> bool {
    let b = s.as_bytes();
    // 23 + 1 + 6 + 1 + 1 bytes at the least (most texts are short stream deltas).
    if b.len() < 32 {
        return false;
    }
    let tok = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
    memchr::memchr_iter(b'.', b).any(|i| {
        i >= 23
            && i + 8 < b.len()
            && b[i + 7] == b'.'
            && b[i + 1..i + 7].iter().all(tok)
            && b[i - 23..i].iter().all(tok)
    })
}

/// The anchor of Twilio API key SIDs: `SK` and 32 lowercase hex.
pub fn has_twilio_sid(s: &str) -> bool {
    static SK: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let b = s.as_bytes();
    if b.len() < 34 {
        return false;
    }
    SK.get_or_init(|| memchr::memmem::Finder::new(b"SK")).find_iter(b).any(|i| {
        b.get(i + 2..i + 34).is_some_and(|h| h.iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c)))
    })
}

/// The anchor of Airtable personal access tokens: `pat`, 14 characters, a `.`, 64 hex.
pub fn has_airtable_pat(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 82 {
        return false;
    }
    memchr::memchr_iter(b'.', b).any(|i| {
        i >= 17
            && &b[i - 17..i - 14] == b"pat"
            && b.get(i + 1..i + 65).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    })
}

/// The anchor of Entra ID client secrets: a digit, then `Q~`.
pub fn has_q_tilde(s: &str) -> bool {
    let b = s.as_bytes();
    memchr::memchr_iter(b'~', b).any(|i| i >= 2 && b[i - 1] == b'Q' && b[i - 2].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        /// The holders decide which lines may be a key's by `is_pem_gutter`, the rules by
        /// `pem_gutter`: a line one takes and the other does not is held in vain, or let go
        /// before its END line comes.
        #[test]
        fn the_holders_gutter_is_the_rules_gutter(gutter in "[ \t0-9aZ:>|/.\u{2192}\u{2502}\r\n-]{0,20}") {
            let rule = regex::Regex::new(concat!("^(?:", pem_gutter!(), ")$")).unwrap();
            proptest::prop_assert_eq!(super::super::check::is_pem_gutter(&gutter), rule.is_match(&gutter));
        }
    }
}
