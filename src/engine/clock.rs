//! Timestamps: RFC 3339 UTC with milliseconds, from the provider when it says, else the
//! time a line was read, or `SOURCE_DATE_EPOCH` for reproducible output.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// Where "now" comes from.
#[derive(Debug, Clone, Copy)]
pub enum Clock {
    /// The system clock.
    System,
    /// A fixed instant (`SOURCE_DATE_EPOCH`).
    Fixed(Millis),
}

impl Clock {
    /// `Fixed` when `SOURCE_DATE_EPOCH` holds a whole number of seconds, else `System`.
    pub fn from_env() -> Clock {
        std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .map_or(Clock::System, |s| Clock::Fixed(s.saturating_mul(1000)))
    }

    /// The current instant.
    pub fn now(self) -> Millis {
        match self {
            Clock::Fixed(ms) => ms,
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as Millis),
        }
    }
}

/// Formats an instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_rfc3339(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// Parses RFC 3339 (`2026-11-29T21:19:16.900Z`, `…+01:00`, fractional digits optional).
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d, h, mi, se) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut i = 19;
    let mut milli = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = s.get(start..i)?;
        if frac.is_empty() {
            return None;
        }
        let digits: String = frac.chars().chain("000".chars()).take(3).collect();
        milli = digits.parse().ok()?;
    }
    let offset = match s.get(i..)? {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && matches!(&tz[..1], "+" | "-") && &tz[3..4] == ":" => {
            let mins = tz[1..3].parse::<i64>().ok()? * 60 + tz[4..6].parse::<i64>().ok()?;
            if tz.starts_with('-') { -mins } else { mins }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    Some(((days * 86_400 + h * 3600 + mi * 60 + se - offset * 60) * 1000) + milli)
}

// Howard Hinnant's civil-date algorithms (public domain).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        assert_eq!(format_rfc3339(1_767_225_600_000), "2026-01-01T00:00:00.000Z");
        let t = parse_rfc3339("2026-11-29T21:19:16.900Z").unwrap();
        assert_eq!(format_rfc3339(t), "2026-11-29T21:19:16.900Z");
        assert_eq!(parse_rfc3339("2026-11-29T22:19:16.9+01:00"), Some(t));
        assert_eq!(parse_rfc3339("2026-11-29T21:19:16.900123456Z"), Some(t));
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-13-29T21:19:16Z"), None);
    }
}
