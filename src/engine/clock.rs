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
            Clock::System => SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as Millis),
        }
    }
}

/// Formats an instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`. Called for every event, so the digits
/// are written straight into place rather than through `format!`.
pub fn format_rfc3339(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        // Years of other widths, and negative ones, as `{:04}` writes them.
        return format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z", sod / 3600, sod / 60 % 60, sod % 60);
    }
    let mut b = *b"0000-00-00T00:00:00.000Z";
    for (at, width, value) in [
        (0, 4, y),
        (5, 2, m),
        (8, 2, d),
        (11, 2, sod / 3600),
        (14, 2, sod / 60 % 60),
        (17, 2, sod % 60),
        (20, 3, milli),
    ] {
        let mut v = value;
        for digit in b[at..at + width].iter_mut().rev() {
            *digit = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    String::from_utf8(b.to_vec()).expect("ASCII digits")
}

/// Parses RFC 3339 (`2026-11-29T21:19:16.900Z`, `…+01:00`, fractional digits optional).
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
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
    let two = |hi: u8, lo: u8| i64::from(hi - b'0') * 10 + i64::from(lo - b'0');
    let offset = match b.get(i..)? {
        b"Z" | b"z" => 0,
        &[sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] if [h1, h2, m1, m2].iter().all(u8::is_ascii_digit) => {
            let mins = two(h1, h2) * 60 + two(m1, m2);
            if sign == b'-' {
                -mins
            } else {
                mins
            }
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
        assert_eq!(parse_rfc3339("2026-11-29T21:19:16+1:000"), None);
    }

    proptest::proptest! {
        /// Found by fuzzing: a zone of six bytes starting with a multi-byte character was
        /// sliced inside it.
        #[test]
        fn any_text_after_a_date_parses_or_not_without_panicking(zone in "\\PC{0,8}", digits in "[0-9]{0,4}") {
            let _ = parse_rfc3339(&format!("2026-11-29T21:19:16.{digits}{zone}"));
            let _ = parse_rfc3339(&format!("2026-11-29T21:19:16{zone}"));
        }
    }

    #[test]
    fn a_zone_that_is_not_ascii_is_no_zone() {
        assert_eq!(parse_rfc3339("2026-11-29T21:19:16\u{fffd}abc"), None);
        assert_eq!(parse_rfc3339("2026-11-29T21:19:16.5é:000"), None);
    }

    /// The `format!` version [`format_rfc3339`] replaced: the reference.
    fn reference(ms: Millis) -> String {
        let secs = ms.div_euclid(1000);
        let milli = ms.rem_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z", sod / 3600, sod / 60 % 60, sod % 60)
    }

    #[test]
    fn formats_as_the_format_macro_did() {
        const DAY: Millis = 86_400_000;
        let mut instants = vec![0, -1, 1, 999, 1000, Millis::MIN / 1000, Millis::MAX / 1000, Millis::MIN, Millis::MAX];
        // Around the turn of each year from 1 BC to 10001 (leap years, centuries, 2000, the
        // 9999/10000 change of width), and day by day through the leap years 2000 and 2024
        // and the common years 1900 and 2100.
        for y in -1..=10_001 {
            let t = days_from_civil(y, 1, 1) * DAY;
            instants.extend([t - DAY, t - 1, t, t + 1, t + 59 * DAY, t + 60 * DAY - 1]);
        }
        for y in [1900, 2000, 2024, 2100] {
            let t = days_from_civil(y, 1, 1) * DAY;
            instants.extend((0..366).map(|d| t + d * DAY + d * 3_723_456 % DAY));
        }
        // Every second of the epoch's first hour and the last hour of 1999, with its millis.
        let y2k = days_from_civil(2000, 1, 1) * DAY;
        instants.extend((0..3600).flat_map(|s| [s * 1000 + s % 1000, y2k - 3_600_000 + s * 1000 + 999]));
        // And a spread of instants over ±10 000 years.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            instants.push((x % 630_000_000_000_000) as Millis - 315_000_000_000_000);
        }
        for t in instants {
            assert_eq!(format_rfc3339(t), reference(t), "{t}");
        }
    }
}
