//! Local time: the one place netlens asks the C library (localtime_r, which
//! honours TZ and /etc/localtime) for the local zone's offset from UTC.
//! Everything else turns seconds into a clock with this offset.

/// Seconds east of UTC of local time at `sec` (Unix seconds); 0 when the C
/// library cannot tell. The last second's answer is kept per thread:
/// localtime_r per packet line showed in the live view's profile, and
/// callers mostly ask about times in order.
pub fn utc_offset(sec: i64) -> i64 {
    thread_local! {
        static LAST: std::cell::Cell<(i64, i64)> = const { std::cell::Cell::new((i64::MIN, 0)) };
    }
    let (last_sec, last_offset) = LAST.get();
    if last_sec == sec {
        return last_offset;
    }
    let offset = ask_libc(sec);
    LAST.set((sec, offset));
    offset
}

fn ask_libc(sec: i64) -> i64 {
    let time = sec as libc::time_t;
    // SAFETY: localtime_r reads `time` and writes into the tm we own.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&time, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// "HH:MM:SS" local time of `t` (Unix seconds).
pub fn local_hms(t: f64) -> String {
    let sec = t.floor() as i64;
    let day = (sec + utc_offset(sec)).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hms_is_local_time_of_day() {
        let t = 1_700_000_000.75;
        let day = (1_700_000_000 + utc_offset(1_700_000_000)).rem_euclid(86_400);
        let want = format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60);
        assert_eq!(local_hms(t), want);
        // The cached answer is the same as a fresh one.
        assert_eq!(utc_offset(1_700_000_000), ask_libc(1_700_000_000));
    }
}
