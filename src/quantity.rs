//! Kubernetes resource quantities ("500m", "1Gi", "2", "1e3", "129M") as
//! integers: CPU in millicores, everything else in units (bytes, Pods,
//! devices). Exact integer arithmetic, rounded up, as the scheduler counts.
//!
//! NB: the scheduler compares CPU in millicores and other resources in whole
//! units (`Quantity.MilliValue()` / `Value()`, both rounding up), so a
//! request of "0.5m" CPU counts as 1m. The same is done here.

/// The unit a resource is counted in: CPU in millicores, others in units.
fn scale(resource: &str) -> i128 {
    if resource == "cpu" { 1000 } else { 1 }
}

/// Parses a quantity of `resource`; None when it is not a quantity or does
/// not fit (the API server would have rejected it).
pub fn parse(resource: &str, text: &str) -> Option<i128> {
    let s = text.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let number_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return None;
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    // The value is digits * 10^(ten) * 2^(two).
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let mut ten: i32 = -(fraction.len() as i32);
    let mut two: u32 = 0;
    match suffix {
        "" => {}
        "n" => ten -= 9,
        "u" => ten -= 6,
        "m" => ten -= 3,
        "k" => ten += 3,
        "M" => ten += 6,
        "G" => ten += 9,
        "T" => ten += 12,
        "P" => ten += 15,
        "E" => ten += 18,
        "Ki" => two = 10,
        "Mi" => two = 20,
        "Gi" => two = 30,
        "Ti" => two = 40,
        "Pi" => two = 50,
        "Ei" => two = 60,
        e if e.starts_with(['e', 'E']) => ten += e[1..].parse::<i32>().ok()?,
        _ => return None,
    }
    let mut numerator = digits.checked_mul(scale(resource))?;
    numerator = numerator.checked_mul(1i128.checked_shl(two)?)?;
    let mut denominator: i128 = 1;
    if ten >= 0 {
        numerator = numerator.checked_mul(10i128.checked_pow(ten as u32)?)?;
    } else {
        denominator = 10i128.checked_pow(ten.unsigned_abs())?;
    }
    // Rounded up (away from zero, as resource.Quantity does).
    let value = (numerator + denominator - 1) / denominator;
    Some(if negative { -value } else { value })
}

/// How a sentence shows an amount of `resource`: `3.5 cpu`, `250m cpu`,
/// `1.5Gi memory`, `110 pods`.
pub fn show(resource: &str, value: i128) -> String {
    if resource == "cpu" {
        return if value % 1000 == 0 {
            format!("{} cpu", value / 1000)
        } else if value.abs() >= 1000 {
            format!("{} cpu", decimal(value, 1000))
        } else {
            format!("{value}m cpu")
        };
    }
    if matches!(resource, "memory" | "ephemeral-storage") || resource.starts_with("hugepages-") {
        for (unit, size) in [
            ("Ti", 1i128 << 40),
            ("Gi", 1 << 30),
            ("Mi", 1 << 20),
            ("Ki", 1 << 10),
        ] {
            if value.abs() >= size {
                return format!("{}{unit} {resource}", decimal(value, size));
            }
        }
        return format!("{value} bytes {resource}");
    }
    format!("{value} {resource}")
}

/// `value / unit` with at most two decimals, truncated, trailing zeros left out.
fn decimal(value: i128, unit: i128) -> String {
    let sign = if value < 0 { "-" } else { "" };
    let v = value.abs();
    let hundredths = v % unit * 100 / unit;
    let mut s = format!("{sign}{}", v / unit);
    if hundredths != 0 {
        let frac = format!("{hundredths:02}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_counted_in_millicores() {
        assert_eq!(parse("cpu", "500m"), Some(500));
        assert_eq!(parse("cpu", "2"), Some(2000));
        assert_eq!(parse("cpu", "100"), Some(100_000));
        assert_eq!(parse("cpu", "0.1"), Some(100));
        assert_eq!(parse("cpu", "1e3"), Some(1_000_000));
        assert_eq!(parse("cpu", "1E-3"), Some(1));
        assert_eq!(parse("cpu", "0.5m"), Some(1), "rounded up");
        assert_eq!(parse("cpu", "1500u"), Some(2), "rounded up");
    }

    #[test]
    fn other_resources_are_counted_in_units() {
        assert_eq!(parse("memory", "1Gi"), Some(1 << 30));
        assert_eq!(parse("memory", "129M"), Some(129_000_000));
        assert_eq!(parse("memory", "1.5Gi"), Some(3 << 29));
        assert_eq!(parse("memory", "128974848"), Some(128_974_848));
        assert_eq!(
            parse("memory", "100m"),
            Some(1),
            "a tenth of a byte is one byte"
        );
        assert_eq!(parse("pods", "110"), Some(110));
        assert_eq!(parse("ephemeral-storage", "2k"), Some(2000));
        assert_eq!(parse("nvidia.com/gpu", "+4"), Some(4));
        assert_eq!(parse("memory", "-1Ki"), Some(-1024));
    }

    #[test]
    fn what_is_not_a_quantity_is_refused() {
        for bad in [
            "",
            "Gi",
            "1..2",
            "1Qi",
            "abc",
            "1e",
            "1e999",
            "99999999999999999999999999999999999999999E",
        ] {
            assert_eq!(parse("memory", bad), None, "{bad}");
        }
        assert_eq!(parse("memory", "1e100"), None, "does not fit");
    }

    #[test]
    fn amounts_read_as_people_write_them() {
        assert_eq!(show("cpu", 100_000), "100 cpu");
        assert_eq!(show("cpu", 3_500), "3.5 cpu");
        assert_eq!(show("cpu", 250), "250m cpu");
        assert_eq!(show("memory", 3 << 29), "1.5Gi memory");
        assert_eq!(show("memory", 512), "512 bytes memory");
        assert_eq!(show("pods", 110), "110 pods");
        assert_eq!(show("example.com/dongle", 2), "2 example.com/dongle");
    }
}
