// Independent golden-data generator for Almanac's time-contract resolver.
//
// Run from the repository root:   java tests/golden/tools/GoldenCases.java [outputDir]
// (default outputDir: tests/golden/cases). Use a JDK whose tz database is the release the specs
// name (2026a): e.g. /usr/lib/jvm/temurin-25-jdk-amd64/bin/java. The tzdb release actually used
// is written into every case's "source".
//
// Independence: this program does NOT use any RRULE library and does NOT look at the project's
// timecontract/ code. Nominal local date-times are enumerated by plain loops over LocalDateTime
// (one hand-written predicate / step per case), or transcribed from the result lists printed in
// RFC 5545 section 3.8.5.3. Each nominal time is then resolved with java.time.zone.ZoneRules:
// getValidOffsets(ldt).size()==1 -> exists once, 0 -> gap (getTransition gives the transition
// instant and the offsets before/after), 2 -> fold (overlap).
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.time.*;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.time.zone.*;
import java.util.*;
import java.util.function.*;
import java.util.regex.*;

public class GoldenCases {
    static final String TZDB = ZoneRulesProvider.getVersions("UTC").lastKey();
    static final String JDK = System.getProperty("java.runtime.version");
    static final String JT = "java.time ZoneRules (JDK " + JDK + ", tzdb " + TZDB + ")";
    static final DateTimeFormatter LOCAL = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss");
    static final DateTimeFormatter INSTANT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
    static final LocalDateTime DEFAULT_START = LocalDateTime.parse("2001-01-01T00:00:00");

    /** Enumerates nominal local date-times in order, from start (inclusive) up to horizon. */
    interface Gen { List<LocalDateTime> gen(LocalDateTime start, LocalDateTime horizon); }

    static final class Case {
        String name, note, zone, rule, gap = "SKIP", fold = "FIRST_ONLY";
        String cutover = "2001-01-01T00:00:00Z", scheduleId = "golden";
        int revision = 1;
        LocalDateTime start, end; // start null => omitted in spec (default 2001-01-01T00:00:00)
        Instant from, to;
        Gen gen;
        boolean rfc;              // nominal list transcribed from RFC 5545 text
        String rfcLabels;         // "EDT"/"EST" per transcribed date (checked against java.time)
        Map<String, Object> extraSpec = new LinkedHashMap<>();
    }

    record Rec(LocalDateTime nominal, int fold, Instant instant, Instant gapAt, ZoneOffset offset,
               String disposition, String reason) {
        Instant placed() { return instant != null ? instant : gapAt; }
    }

    static final List<Case> CASES = new ArrayList<>();

    // ------------------------------------------------------------------ generators (plain loops)

    /** Every calendar day from start's date that satisfies p, at each of the given times. */
    static Gen days(Predicate<LocalDate> p, String... times) {
        return (s, hz) -> {
            List<LocalDateTime> out = new ArrayList<>();
            for (LocalDate d = s.toLocalDate(); !d.isAfter(hz.toLocalDate()); d = d.plusDays(1)) {
                if (!p.test(d)) continue;
                for (String t : times) out.add(d.atTime(LocalTime.parse(t)));
            }
            return out;
        };
    }

    static Gen daily(String... times) { return days(d -> true, times); }

    /** start, start+step, start+2*step ... in floating (naive) local time. */
    static Gen everyMinutes(int step) {
        return (s, hz) -> {
            List<LocalDateTime> out = new ArrayList<>();
            for (LocalDateTime t = s; !t.isAfter(hz); t = t.plusMinutes(step)) out.add(t);
            return out;
        };
    }

    static Gen fixed(List<LocalDateTime> list) { return (s, hz) -> list; }

    static boolean weekday(LocalDate d) {
        return d.getDayOfWeek() != DayOfWeek.SATURDAY && d.getDayOfWeek() != DayOfWeek.SUNDAY;
    }

    /** Last Monday-Friday of d's month (walk back from YearMonth.atEndOfMonth). */
    static boolean lastWeekdayOfMonth(LocalDate d) {
        LocalDate e = YearMonth.from(d).atEndOfMonth();
        while (!weekday(e)) e = e.minusDays(1);
        return d.equals(e);
    }


    // RFC 7529 SKIP for the Gregorian scale (its rule part for invalid dates): a month day the month lacks is dropped (OMIT), moved to the month's last day
    // (BACKWARD, YearMonth.atEndOfMonth) or to the first day of the next month (FORWARD). Instances
    // moved onto the same date-time are one instance (a TreeSet), and COUNT counts after the move.

    /** The date for month day md in ym under skip, or null when OMIT drops it. */
    static LocalDate skipDay(YearMonth ym, int md, String skip) {
        if (ym.isValidDay(md)) return ym.atDay(md);
        switch (skip) {
            case "OMIT": return null;
            case "BACKWARD": return ym.atEndOfMonth();
            case "FORWARD": return ym.plusMonths(1).atDay(1);
            default: throw new IllegalArgumentException(skip);
        }
    }

    /** FREQ=MONTHLY;BYMONTHDAY=<monthDays> under SKIP, every month from start's, at time. */
    static Gen monthlySkip(String skip, String time, int... monthDays) {
        return (s, hz) -> {
            TreeSet<LocalDateTime> out = new TreeSet<>();
            for (YearMonth ym = YearMonth.from(s); !ym.isAfter(YearMonth.from(hz)); ym = ym.plusMonths(1))
                for (int md : monthDays) {
                    LocalDate d = skipDay(ym, md, skip);
                    if (d != null) out.add(d.atTime(LocalTime.parse(time)));
                }
            return new ArrayList<>(out);
        };
    }

    /** FREQ=YEARLY from a start on Feb 29 under SKIP: every year from start's, at start's time. */
    static Gen leapDayYearlySkip(String skip) {
        return (s, hz) -> {
            if (s.getMonth() != Month.FEBRUARY || s.getDayOfMonth() != 29) throw new IllegalArgumentException("start");
            TreeSet<LocalDateTime> out = new TreeSet<>();
            for (int y = s.getYear(); y <= hz.getYear(); y++) {
                LocalDate d = skipDay(YearMonth.of(y, 2), 29, skip);
                if (d != null) out.add(d.atTime(s.toLocalTime()));
            }
            return new ArrayList<>(out);
        };
    }

    // ------------------------------------------------------------------ case builders

    static Case c(String name, String zone, String rule, String start, String gap, String fold,
                  String from, String to, Gen gen, String note) {
        Case k = new Case();
        k.name = name; k.zone = zone; k.rule = rule;
        k.start = start == null ? null : LocalDateTime.parse(start);
        k.gap = gap; k.fold = fold;
        k.from = Instant.parse(from); k.to = Instant.parse(to);
        k.gen = gen; k.note = note;
        CASES.add(k);
        return k;
    }

    static final String[] GAPS = {"SKIP", "SHIFT_FORWARD"};
    static final String[] FOLDS = {"FIRST_ONLY", "SECOND_ONLY", "BOTH"};

    static String slug(String policy) { return policy.toLowerCase().replace('_', '-'); }

    // RFC 5545 transcription: groups separated by ';', each "YYYY Mon items LABEL [@times]".
    // items: comma list of "d", "a-b" or "a-b/step". times: comma list of "HH:MM" or
    // "HH:MM-HH:MM/stepMinutes". Default time 09:00.
    static final Map<String, String> LABEL_OFFSET = Map.of("EDT", "-04:00", "EST", "-05:00");

    static List<String[]> rfcParse(String spec) {
        List<String[]> out = new ArrayList<>(); // [localDateTime, label]
        for (String g : spec.split(";")) {
            g = g.trim();
            String times = "09:00";
            int at = g.indexOf('@');
            if (at >= 0) { times = g.substring(at + 1).trim(); g = g.substring(0, at).trim(); }
            String[] p = g.split("\\s+");
            int year = Integer.parseInt(p[0]);
            Month m = Arrays.stream(Month.values())
                    .filter(x -> x.name().substring(0, 3).equalsIgnoreCase(p[1])).findFirst().get();
            String label = p[3];
            if (!LABEL_OFFSET.containsKey(label)) throw new IllegalArgumentException(g);
            List<LocalTime> ts = new ArrayList<>();
            for (String t : times.split(",")) {
                Matcher r = Pattern.compile("(\\d\\d:\\d\\d)-(\\d\\d:\\d\\d)/(\\d+)").matcher(t.trim());
                if (r.matches()) {
                    for (LocalTime x = LocalTime.parse(r.group(1)); !x.isAfter(LocalTime.parse(r.group(2)));
                         x = x.plusMinutes(Integer.parseInt(r.group(3)))) ts.add(x);
                } else ts.add(LocalTime.parse(t.trim()));
            }
            for (String item : p[2].split(",")) {
                Matcher r = Pattern.compile("(\\d+)(?:-(\\d+)(?:/(\\d+))?)?").matcher(item);
                if (!r.matches()) throw new IllegalArgumentException(item);
                int a = Integer.parseInt(r.group(1));
                int b = r.group(2) == null ? a : Integer.parseInt(r.group(2));
                int st = r.group(3) == null ? 1 : Integer.parseInt(r.group(3));
                for (int d = a; d <= b; d += st)
                    for (LocalTime t : ts)
                        out.add(new String[]{LocalDate.of(year, m, d).atTime(t).toString(), label});
            }
        }
        return out;
    }

    static Case rfc(String name, String title, String dtstart, String rule, String listing,
                    String from, String to, String extraNote) {
        List<String[]> parsed = rfcParse(listing);
        List<LocalDateTime> list = new ArrayList<>();
        StringBuilder labels = new StringBuilder();
        for (String[] e : parsed) { list.add(LocalDateTime.parse(e[0])); labels.append(e[1]).append(' '); }
        Case k = c("rfc5545-" + name, "America/New_York", rule, dtstart, "SKIP", "FIRST_ONLY",
                from, to, fixed(list), null);
        k.rfc = true;
        k.rfcLabels = labels.toString().trim();
        k.cutover = "1990-01-01T00:00:00Z";
        k.note = "RFC 5545 section 3.8.5.3 example \"" + title + "\" (DTSTART;TZID=America/New_York:"
                + dtstart.replace("-", "").replace(":", "") + ", RRULE:" + rule
                + "). Nominal local times transcribed from the RFC's printed result list; the RFC's"
                + " EDT/EST label of every date was checked against the java.time offset."
                + " cutoverAt set to 1990 because the example dates precede 2001."
                + (extraNote == null ? "" : " " + extraNote);
        return k;
    }

    // ------------------------------------------------------------------ case definitions

    static void defineCases() {
        String ny = "America/New_York";
        String nyDst = "America/New_York 2027-03-14 02:00 EST(-05:00) -> 03:00 EDT(-04:00), transition 2027-03-14T07:00:00Z";
        String nyStd = "America/New_York 2026-11-01 02:00 EDT(-04:00) -> 01:00 EST(-05:00), transition 2026-11-01T06:00:00Z; 01:00-01:59 occurs twice";

        // --- New York daily, the brief's core cases
        for (String g : GAPS)
            c("new-york-daily-0230-spring-gap-" + slug(g), ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                    "2027-03-01T00:00:00", g, "FIRST_ONLY", "2027-03-12T00:00:00Z", "2027-03-17T00:00:00Z",
                    daily("02:30"), "Daily 02:30 across the spring gap. " + nyDst);
        for (String f : FOLDS)
            c("new-york-daily-0130-fall-fold-" + slug(f), ny, "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                    "2026-10-01T00:00:00", "SKIP", f, "2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z",
                    daily("01:30"), "Daily 01:30 across the fall fold. " + nyStd);
        // 02:30 on the fall day is not ambiguous (the fold is 01:00-01:59).
        for (String f : FOLDS)
            c("new-york-daily-0230-fall-day-not-ambiguous-" + slug(f), ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                    "2026-10-01T00:00:00", "SKIP", f, "2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z",
                    daily("02:30"), "Daily 02:30 on the fall-back day exists once (the repeated hour is 01:00-01:59). " + nyStd);

        // --- The seed example as written (start omitted => 2001-01-01T00:00:00, cutover 2026-11-01T06:00Z)
        for (String[] w : new String[][]{
                {"spring", "2027-03-12T00:00:00Z", "2027-03-17T00:00:00Z", nyDst},
                {"fall", "2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z", nyStd + ". Records placed before cutoverAt 2026-11-01T06:00:00Z are excluded"}}) {
            Case k = c("seed-daily-ops-summary-" + w[0], ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", null,
                    "SKIP", "FIRST_ONLY", w[1], w[2], daily("02:30"),
                    "The design's seed spec as written (start omitted: default DTSTART 2001-01-01T00:00:00). " + w[3] + ".");
            k.scheduleId = "daily-ops-summary"; k.revision = 7; k.cutover = "2026-11-01T06:00:00Z";
            k.extraSpec.put("misfirePolicy", "CATCH_UP_BOUNDED"); k.extraSpec.put("maxCatchUp", 2);
        }
        for (String[] w : new String[][]{
                {"spring", "2027-03-12T00:00:00Z", "2027-03-17T00:00:00Z", nyDst},
                {"fall", "2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z", nyStd}}) {
            Case k = c("seed-rule-early-cutover-" + w[0], ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", null,
                    "SKIP", "FIRST_ONLY", w[1], w[2], daily("02:30"),
                    "Seed rule and policies, start omitted (default 2001-01-01T00:00:00), cutoverAt 2001-01-01T00:00:00Z. " + w[3] + ".");
            k.scheduleId = "daily-ops-summary"; k.revision = 1;
        }

        // --- Hourly and 30-minute rules, every gap x fold policy, both NY transitions
        String[][] sub = {
                {"hourly", "FREQ=HOURLY", "60"},
                {"every-30-minutes", "FREQ=MINUTELY;INTERVAL=30", "30"}};
        for (String[] s : sub)
            for (String g : GAPS)
                for (String f : FOLDS) {
                    c("new-york-" + s[0] + "-spring-" + slug(g) + "-" + slug(f), ny, s[1], "2027-03-13T00:00:00",
                            g, f, "2027-03-14T04:00:00Z", "2027-03-14T10:00:00Z", everyMinutes(Integer.parseInt(s[2])),
                            s[1] + " from 2027-03-13T00:00:00 in floating local time. " + nyDst
                                    + (g.equals("SHIFT_FORWARD") ? ". Shifted gap times land on natural occurrences => GAP_SHIFT_COLLISION." : "."));
                    c("new-york-" + s[0] + "-fall-" + slug(g) + "-" + slug(f), ny, s[1], "2026-10-31T00:00:00",
                            g, f, "2026-11-01T03:00:00Z", "2026-11-01T09:00:00Z", everyMinutes(Integer.parseInt(s[2])),
                            s[1] + " from 2026-10-31T00:00:00 in floating local time. " + nyStd + ".");
                }

        // --- Europe/London
        String lonG = "Europe/London 2026-03-29 01:00 GMT(+00:00) -> 02:00 BST(+01:00), transition 2026-03-29T01:00:00Z";
        String lonF = "Europe/London 2026-10-25 02:00 BST -> 01:00 GMT, transition 2026-10-25T01:00:00Z; 01:00-01:59 occurs twice";
        for (String g : GAPS)
            c("london-daily-0130-spring-gap-" + slug(g), "Europe/London", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                    "2026-03-01T00:00:00", g, "FIRST_ONLY", "2026-03-27T00:00:00Z", "2026-04-01T00:00:00Z",
                    daily("01:30"), "Daily 01:30. " + lonG + ".");
        for (String f : FOLDS)
            c("london-daily-0130-fall-fold-" + slug(f), "Europe/London", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                    "2026-10-01T00:00:00", "SKIP", f, "2026-10-23T00:00:00Z", "2026-10-28T00:00:00Z",
                    daily("01:30"), "Daily 01:30. " + lonF + ".");

        // --- Australia/Lord_Howe (30-minute DST)
        String lhG = "Australia/Lord_Howe 2026-10-04 02:00 (+10:30) -> 02:30 (+11:00), transition 2026-10-03T15:30:00Z; 02:00-02:29 does not exist";
        String lhF = "Australia/Lord_Howe 2026-04-05 02:00 (+11:00) -> 01:30 (+10:30), transition 2026-04-04T15:00:00Z; 01:30-01:59 occurs twice";
        for (String g : GAPS)
            c("lord-howe-daily-0215-spring-gap-" + slug(g), "Australia/Lord_Howe", "FREQ=DAILY;BYHOUR=2;BYMINUTE=15",
                    "2026-09-01T00:00:00", g, "FIRST_ONLY", "2026-10-01T00:00:00Z", "2026-10-07T00:00:00Z",
                    daily("02:15"), "Daily 02:15. " + lhG + ".");
        for (String f : FOLDS)
            c("lord-howe-daily-0145-fold-" + slug(f), "Australia/Lord_Howe", "FREQ=DAILY;BYHOUR=1;BYMINUTE=45",
                    "2026-03-01T00:00:00", "SKIP", f, "2026-04-02T00:00:00Z", "2026-04-08T00:00:00Z",
                    daily("01:45"), "Daily 01:45. " + lhF + ".");
        c("lord-howe-hourly-spring-gap-shift-forward", "Australia/Lord_Howe", "FREQ=HOURLY", "2026-10-03T00:00:00",
                "SHIFT_FORWARD", "FIRST_ONLY", "2026-10-03T12:00:00Z", "2026-10-03T19:00:00Z", everyMinutes(60),
                "Hourly; 02:00 shifts by the 30-minute gap to 02:30 (+11:00), which is not a natural occurrence of an hourly rule => GAP_SHIFTED_FORWARD. " + lhG + ".");
        c("lord-howe-every-30-minutes-spring-gap-shift-forward", "Australia/Lord_Howe", "FREQ=MINUTELY;INTERVAL=30",
                "2026-10-03T00:00:00", "SHIFT_FORWARD", "FIRST_ONLY", "2026-10-03T13:00:00Z", "2026-10-03T17:00:00Z",
                everyMinutes(30), "Every 30 minutes; 02:00 shifts to 02:30 (+11:00), where the natural 02:30 already is => GAP_SHIFT_COLLISION. " + lhG + ".");
        c("lord-howe-every-30-minutes-spring-gap-skip", "Australia/Lord_Howe", "FREQ=MINUTELY;INTERVAL=30",
                "2026-10-03T00:00:00", "SKIP", "FIRST_ONLY", "2026-10-03T13:00:00Z", "2026-10-03T17:00:00Z",
                everyMinutes(30), "Every 30 minutes. " + lhG + ".");
        c("lord-howe-every-30-minutes-fold-both", "Australia/Lord_Howe", "FREQ=MINUTELY;INTERVAL=30",
                "2026-04-04T00:00:00", "SKIP", "BOTH", "2026-04-04T13:00:00Z", "2026-04-04T17:00:00Z",
                everyMinutes(30), "Every 30 minutes. " + lhF + ".");

        // --- America/Santiago (transitions at local midnight)
        String scG = "America/Santiago 2025-09-07 00:00 (-04:00) -> 01:00 (-03:00), transition 2025-09-07T04:00:00Z; 00:00-00:59 does not exist";
        String scF = "America/Santiago 2025-04-06 00:00 (-03:00) -> 2025-04-05 23:00 (-04:00), transition 2025-04-06T03:00:00Z; 2025-04-05 23:00-23:59 occurs twice";
        for (String g : GAPS)
            c("santiago-daily-0000-spring-gap-" + slug(g), "America/Santiago", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0",
                    "2025-09-01T00:00:00", g, "FIRST_ONLY", "2025-09-05T00:00:00Z", "2025-09-10T00:00:00Z",
                    daily("00:00"), "Daily 00:00 (midnight does not exist on the spring day). " + scG + ".");
        for (String f : FOLDS)
            c("santiago-daily-2330-fall-fold-" + slug(f), "America/Santiago", "FREQ=DAILY;BYHOUR=23;BYMINUTE=30",
                    "2025-04-01T00:00:00", "SKIP", f, "2025-04-04T00:00:00Z", "2025-04-08T00:00:00Z",
                    daily("23:30"), "Daily 23:30. " + scF + ".");

        // --- America/Havana (transitions at local midnight)
        String hvG = "America/Havana 2026-03-08 00:00 CST(-05:00) -> 01:00 CDT(-04:00), transition 2026-03-08T05:00:00Z; 00:00-00:59 does not exist";
        String hvF = "America/Havana 2026-11-01 01:00 CDT(-04:00) -> 00:00 CST(-05:00), transition 2026-11-01T05:00:00Z; 00:00-00:59 occurs twice";
        for (String g : GAPS)
            c("havana-daily-0000-spring-gap-" + slug(g), "America/Havana", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0",
                    "2026-03-01T00:00:00", g, "FIRST_ONLY", "2026-03-06T00:00:00Z", "2026-03-11T00:00:00Z",
                    daily("00:00"), "Daily 00:00 (midnight does not exist on the spring day). " + hvG + ".");
        for (String f : FOLDS)
            c("havana-daily-0030-fall-fold-" + slug(f), "America/Havana", "FREQ=DAILY;BYHOUR=0;BYMINUTE=30",
                    "2026-10-01T00:00:00", "SKIP", f, "2026-10-30T00:00:00Z", "2026-11-04T00:00:00Z",
                    daily("00:30"), "Daily 00:30. " + hvF + ".");

        // --- Pacific/Apia 2011-12-30: a whole missing day
        String ap = "Pacific/Apia skipped 2011-12-30 entirely: 2011-12-30 00:00 (-10:00) -> 2011-12-31 00:00 (+14:00), transition 2011-12-30T10:00:00Z";
        for (String g : GAPS)
            c("apia-daily-1200-missing-day-" + slug(g), "Pacific/Apia", "FREQ=DAILY;BYHOUR=12;BYMINUTE=0",
                    "2011-12-01T00:00:00", g, "FIRST_ONLY", "2011-12-27T00:00:00Z", "2012-01-02T00:00:00Z",
                    daily("12:00"), "Daily 12:00. " + ap + (g.equals("SHIFT_FORWARD")
                            ? ". Shifting 2011-12-30T12:00 by 24h gives 2011-12-30T22:00:00Z = the natural 2011-12-31T12:00+14:00 => GAP_SHIFT_COLLISION." : "."));
        c("apia-daily-0000-missing-day-shift-forward", "Pacific/Apia", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0",
                "2011-12-01T00:00:00", "SHIFT_FORWARD", "FIRST_ONLY", "2011-12-27T00:00:00Z", "2012-01-02T00:00:00Z",
                daily("00:00"), "Daily 00:00. " + ap + ". 2011-12-30T00:00 shifted = 2011-12-30T10:00:00Z = the natural 2011-12-31T00:00+14:00 => GAP_SHIFT_COLLISION.");

        // --- Antarctica/Troll (2-hour DST, +00 <-> +02)
        String trG = "Antarctica/Troll 2026-03-29 01:00 (+00:00) -> 03:00 (+02:00), transition 2026-03-29T01:00:00Z; 01:00-02:59 does not exist";
        String trF = "Antarctica/Troll 2026-10-25 03:00 (+02:00) -> 01:00 (+00:00), transition 2026-10-25T01:00:00Z; 01:00-02:59 occurs twice";
        for (String g : GAPS)
            c("troll-hourly-spring-gap-" + slug(g), "Antarctica/Troll", "FREQ=HOURLY", "2026-03-28T00:00:00",
                    g, "FIRST_ONLY", "2026-03-28T22:00:00Z", "2026-03-29T04:00:00Z", everyMinutes(60),
                    "Hourly. " + trG + ".");
        for (String f : FOLDS)
            c("troll-hourly-fall-fold-" + slug(f), "Antarctica/Troll", "FREQ=HOURLY", "2026-10-24T00:00:00",
                    "SKIP", f, "2026-10-24T22:00:00Z", "2026-10-25T05:00:00Z", everyMinutes(60),
                    "Hourly. " + trF + ".");
        for (String g : GAPS)
            c("troll-daily-0130-spring-gap-" + slug(g), "Antarctica/Troll", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                    "2026-03-01T00:00:00", g, "FIRST_ONLY", "2026-03-27T00:00:00Z", "2026-04-01T00:00:00Z",
                    daily("01:30"), "Daily 01:30 (shift is 2 hours: 01:30 -> 03:30+02:00). " + trG + ".");
        c("troll-daily-0130-fall-fold-both", "Antarctica/Troll", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                "2026-10-01T00:00:00", "SKIP", "BOTH", "2026-10-23T00:00:00Z", "2026-10-28T00:00:00Z",
                daily("01:30"), "Daily 01:30 (the two instants are 2 hours apart). " + trF + ".");

        // --- Europe/Dublin (negative DST in tzdb source; UTC offsets still +00 winter / +01 summer)
        String dbG = "Europe/Dublin 2026-03-29 01:00 GMT(+00:00) -> 02:00 IST(+01:00), transition 2026-03-29T01:00:00Z (tzdb models Irish time with negative DST in winter; the UTC offsets are unaffected)";
        String dbF = "Europe/Dublin 2026-10-25 02:00 IST(+01:00) -> 01:00 GMT(+00:00), transition 2026-10-25T01:00:00Z";
        for (String g : GAPS)
            c("dublin-daily-0130-spring-gap-" + slug(g), "Europe/Dublin", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                    "2026-03-01T00:00:00", g, "FIRST_ONLY", "2026-03-27T00:00:00Z", "2026-04-01T00:00:00Z",
                    daily("01:30"), "Daily 01:30. " + dbG + ".");
        c("dublin-daily-0130-fall-fold-both", "Europe/Dublin", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
                "2026-10-01T00:00:00", "SKIP", "BOTH", "2026-10-23T00:00:00Z", "2026-10-28T00:00:00Z",
                daily("01:30"), "Daily 01:30. " + dbF + ".");
        c("dublin-daily-1200-summer-offset", "Europe/Dublin", "FREQ=DAILY;BYHOUR=12;BYMINUTE=0",
                "2026-07-01T00:00:00", "SKIP", "FIRST_ONLY", "2026-07-01T00:00:00Z", "2026-07-04T00:00:00Z",
                daily("12:00"), "Daily 12:00 in July: Irish Standard Time is +01:00 in summer despite tzdb's negative-DST model.");
        c("dublin-daily-1200-winter-offset", "Europe/Dublin", "FREQ=DAILY;BYHOUR=12;BYMINUTE=0",
                "2026-01-01T00:00:00", "SKIP", "FIRST_ONLY", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z",
                daily("12:00"), "Daily 12:00 in January: +00:00.");

        // --- Asia/Tehran: DST in 2022, none from 2023
        String thG = "Asia/Tehran 2022-03-22 00:00 (+03:30) -> 01:00 (+04:30), transition 2022-03-21T20:30:00Z; 00:00-00:59 does not exist. Iran abolished DST from 2023";
        String thF = "Asia/Tehran 2022-09-22 00:00 (+04:30) -> 2022-09-21 23:00 (+03:30), transition 2022-09-21T19:30:00Z; 2022-09-21 23:00-23:59 occurs twice. Iran abolished DST from 2023";
        for (String g : GAPS)
            c("tehran-daily-0030-2022-spring-gap-" + slug(g), "Asia/Tehran", "FREQ=DAILY;BYHOUR=0;BYMINUTE=30",
                    "2022-03-01T00:00:00", g, "FIRST_ONLY", "2022-03-19T00:00:00Z", "2022-03-25T00:00:00Z",
                    daily("00:30"), "Daily 00:30. " + thG + ".");
        c("tehran-daily-0030-2023-same-dates-no-gap", "Asia/Tehran", "FREQ=DAILY;BYHOUR=0;BYMINUTE=30",
                "2023-03-01T00:00:00", "SKIP", "FIRST_ONLY", "2023-03-19T00:00:00Z", "2023-03-25T00:00:00Z",
                daily("00:30"), "Daily 00:30 on the same dates in 2023: no DST any more, +03:30 throughout.");
        for (String f : new String[]{"FIRST_ONLY", "BOTH"})
            c("tehran-daily-2330-2022-fall-fold-" + slug(f), "Asia/Tehran", "FREQ=DAILY;BYHOUR=23;BYMINUTE=30",
                    "2022-09-01T00:00:00", "SKIP", f, "2022-09-19T00:00:00Z", "2022-09-24T00:00:00Z",
                    daily("23:30"), "Daily 23:30. " + thF + ".");
        c("tehran-daily-2330-2023-same-dates-no-fold-both", "Asia/Tehran", "FREQ=DAILY;BYHOUR=23;BYMINUTE=30",
                "2023-09-01T00:00:00", "SKIP", "BOTH", "2023-09-19T00:00:00Z", "2023-09-24T00:00:00Z",
                daily("23:30"), "Daily 23:30 on the same dates in 2023: no DST, so nothing is ambiguous even under BOTH.");

        // --- Zones without DST
        c("tokyo-daily-0230-no-dst-shift-forward-both", "Asia/Tokyo", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                "2027-03-01T00:00:00", "SHIFT_FORWARD", "BOTH", "2027-03-12T00:00:00Z", "2027-03-17T00:00:00Z",
                daily("02:30"), "Asia/Tokyo has no DST (+09:00); policies never apply.");
        c("tokyo-hourly-no-dst", "Asia/Tokyo", "FREQ=HOURLY", "2026-11-01T00:00:00", "SKIP", "BOTH",
                "2026-10-31T20:00:00Z", "2026-11-01T02:00:00Z", everyMinutes(60), "Asia/Tokyo has no DST (+09:00).");
        c("utc-every-30-minutes", "UTC", "FREQ=MINUTELY;INTERVAL=30", "2027-03-14T00:00:00", "SHIFT_FORWARD", "BOTH",
                "2027-03-14T05:00:00Z", "2027-03-14T09:00:00Z", everyMinutes(30), "UTC: offset +00:00 always.");
        c("kolkata-daily-0900-half-hour-offset", "Asia/Kolkata", "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
                "2026-06-01T00:00:00", "SKIP", "FIRST_ONLY", "2026-06-01T00:00:00Z", "2026-06-04T00:00:00Z",
                daily("09:00"), "Asia/Kolkata: +05:30, no DST.");
        c("kathmandu-daily-0900-quarter-hour-offset", "Asia/Kathmandu", "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
                "2026-06-01T00:00:00", "SKIP", "FIRST_ONLY", "2026-06-01T00:00:00Z", "2026-06-04T00:00:00Z",
                daily("09:00"), "Asia/Kathmandu: +05:45, no DST.");

        // --- Other DST zones
        String sjG = "America/St_Johns 2027-03-14 02:00 NST(-03:30) -> 03:00 NDT(-02:30), transition 2027-03-14T05:30:00Z";
        for (String g : GAPS)
            c("st-johns-daily-0230-spring-gap-" + slug(g), "America/St_Johns", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                    "2027-03-01T00:00:00", g, "FIRST_ONLY", "2027-03-12T00:00:00Z", "2027-03-17T00:00:00Z",
                    daily("02:30"), "Daily 02:30 in a half-hour-offset zone. " + sjG + ".");
        String syG = "Australia/Sydney 2026-10-04 02:00 AEST(+10:00) -> 03:00 AEDT(+11:00), transition 2026-10-03T16:00:00Z";
        String syF = "Australia/Sydney 2026-04-05 03:00 AEDT(+11:00) -> 02:00 AEST(+10:00), transition 2026-04-04T16:00:00Z; 02:00-02:59 occurs twice";
        c("sydney-daily-0230-spring-gap-shift-forward", "Australia/Sydney", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                "2026-09-01T00:00:00", "SHIFT_FORWARD", "FIRST_ONLY", "2026-10-01T00:00:00Z", "2026-10-07T00:00:00Z",
                daily("02:30"), "Daily 02:30, southern hemisphere (gap in October). " + syG + ".");
        c("sydney-daily-0230-fall-fold-second-only", "Australia/Sydney", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                "2026-03-01T00:00:00", "SKIP", "SECOND_ONLY", "2026-04-02T00:00:00Z", "2026-04-08T00:00:00Z",
                daily("02:30"), "Daily 02:30, southern hemisphere (fold in April). " + syF + ".");

        // --- Calendar arithmetic
        c("leap-day-yearly-2023-2033-new-york", ny, "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "2023-01-01T09:00:00",
                "SKIP", "FIRST_ONLY", "2023-01-01T00:00:00Z", "2034-01-01T00:00:00Z",
                days(d -> d.getMonth() == Month.FEBRUARY && d.getDayOfMonth() == 29, "09:00"),
                "Feb 29 exists only in leap years (LocalDate.isLeapYear): 2024, 2028, 2032. The start 2023-01-01T09:00 does not match the rule and is not an occurrence.");
        c("leap-day-yearly-utc-start-on-leap-day", "UTC", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "2024-02-29T06:00:00",
                "SKIP", "FIRST_ONLY", "2024-01-01T00:00:00Z", "2034-01-01T00:00:00Z",
                days(d -> d.getMonth() == Month.FEBRUARY && d.getDayOfMonth() == 29, "06:00"),
                "Feb 29 at 06:00 UTC, start on 2024-02-29: 2024, 2028, 2032 (not shifted to Feb 28 / Mar 1 in other years).");
        c("month-end-bymonthday-minus1-2026-new-york", ny, "FREQ=MONTHLY;BYMONTHDAY=-1", "2026-01-31T10:00:00",
                "SKIP", "FIRST_ONLY", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z",
                days(d -> d.equals(YearMonth.from(d).atEndOfMonth()), "10:00"),
                "Last day of each month (YearMonth.atEndOfMonth) at 10:00 (time taken from start); offsets follow EST/EDT.");
        c("month-end-bymonthday-minus1-leap-february-2028", "Europe/London", "FREQ=MONTHLY;BYMONTHDAY=-1", "2027-12-31T10:00:00",
                "SKIP", "FIRST_ONLY", "2027-12-01T00:00:00Z", "2028-05-01T00:00:00Z",
                days(d -> d.equals(YearMonth.from(d).atEndOfMonth()), "10:00"),
                "Last day of the month including 2028-02-29; BST from 2028-03-26.");
        c("monthly-bymonthday-31-skips-short-months-2026", ny, "FREQ=MONTHLY;BYMONTHDAY=31", "2026-01-31T10:00:00",
                "SKIP", "FIRST_ONLY", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z",
                days(d -> d.getDayOfMonth() == 31, "10:00"),
                "Day 31 only in months that have it (Jan, Mar, May, Jul, Aug, Oct, Dec); other months produce nothing.");
        c("monthly-bysetpos-last-weekday-2026", ny, "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "2026-01-30T17:00:00",
                "SKIP", "FIRST_ONLY", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z",
                days(GoldenCases::lastWeekdayOfMonth, "17:00"),
                "Last Monday-Friday of each month (walk back from YearMonth.atEndOfMonth over Sat/Sun) at 17:00 (from start).");
        c("monthly-bysetpos-last-weekday-london-2027", "Europe/London", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "2027-01-29T08:00:00",
                "SKIP", "FIRST_ONLY", "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z",
                days(GoldenCases::lastWeekdayOfMonth, "08:00"),
                "Last weekday of each month 2027 at 08:00 London (GMT/BST).");
        for (String g : GAPS)
            c("monthly-day14-0230-new-york-gap-" + slug(g), ny, "FREQ=MONTHLY;BYMONTHDAY=14;BYHOUR=2;BYMINUTE=30", "2027-01-14T02:30:00",
                    g, "FIRST_ONLY", "2027-01-01T00:00:00Z", "2027-06-01T00:00:00Z",
                    days(d -> d.getDayOfMonth() == 14, "02:30"),
                    "Monthly on the 14th at 02:30: 2027-03-14 02:30 falls in the spring gap. " + nyDst + ".");
        c("weekly-sunday-0130-new-york-fold-both", ny, "FREQ=WEEKLY;BYDAY=SU;BYHOUR=1;BYMINUTE=30", "2026-10-04T01:30:00",
                "SKIP", "BOTH", "2026-10-18T00:00:00Z", "2026-11-16T00:00:00Z",
                days(d -> d.getDayOfWeek() == DayOfWeek.SUNDAY, "01:30"),
                "Weekly Sunday 01:30: 2026-11-01 is the fall-back Sunday. " + nyStd + ".");

        // --- COUNT across a transition
        for (String g : GAPS)
            c("new-york-daily-0230-count5-spring-" + slug(g), ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=5", "2027-03-12T00:00:00",
                    g, "FIRST_ONLY", "2027-03-10T00:00:00Z", "2027-03-25T00:00:00Z", daily("02:30"),
                    "COUNT=5 from 2027-03-12: under SKIP the gap time 2027-03-14T02:30 is not counted (5 existing instances: 12,13,15,16,17, plus the SKIPPED_GAP record for the 14th); under SHIFT_FORWARD it counts (12..16). " + nyDst + ".");
        for (String f : new String[]{"BOTH", "SECOND_ONLY"})
            c("new-york-daily-0130-count3-fall-" + slug(f), ny, "FREQ=DAILY;BYHOUR=1;BYMINUTE=30;COUNT=3", "2026-10-31T00:00:00",
                    "SKIP", f, "2026-10-29T00:00:00Z", "2026-11-10T00:00:00Z", daily("01:30"),
                    "COUNT=3 from 2026-10-31: the fold time 2026-11-01T01:30 counts once whatever the fold policy (Oct 31, Nov 1, Nov 2). " + nyStd + ".");
        c("new-york-daily-0230-count3-start-not-matching", ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=3", "2027-03-12T12:00:00",
                "SKIP", "FIRST_ONLY", "2027-03-10T00:00:00Z", "2027-03-25T00:00:00Z", daily("02:30"),
                "Start 2027-03-12T12:00 does not match the rule: it is not an occurrence and is not counted. COUNT=3 existing: 13, 15, 16 (14 is a gap under SKIP, not counted). " + nyDst + ".");

        // --- UNTIL (UTC, inclusive) across a transition
        for (String g : GAPS)
            c("new-york-daily-0230-until-spring-" + slug(g), ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;UNTIL=20270316T063000Z", "2027-03-10T00:00:00",
                    g, "FIRST_ONLY", "2027-03-10T00:00:00Z", "2027-03-25T00:00:00Z", daily("02:30"),
                    "UNTIL=20270316T063000Z is exactly 2027-03-16T02:30 EDT: inclusive, so the 16th is the last. (Read as EST it would be 07:30Z.) " + nyDst + ".");
        c("new-york-daily-0130-until-fall-first-only", ny, "FREQ=DAILY;BYHOUR=1;BYMINUTE=30;UNTIL=20261102T063000Z", "2026-10-28T00:00:00",
                "SKIP", "FIRST_ONLY", "2026-10-28T00:00:00Z", "2026-11-10T00:00:00Z", daily("01:30"),
                "UNTIL=20261102T063000Z = 2026-11-02T01:30 EST, inclusive. " + nyStd + ".");
        c("new-york-daily-0130-until-between-fold-instants-both", ny, "FREQ=DAILY;BYHOUR=1;BYMINUTE=30;UNTIL=20261101T053000Z", "2026-10-28T00:00:00",
                "SKIP", "BOTH", "2026-10-28T00:00:00Z", "2026-11-10T00:00:00Z", daily("01:30"),
                "UNTIL=20261101T053000Z equals the first (EDT) instant of the folded 2026-11-01T01:30; UNTIL is compared with each resolved instant, so fold 0 (05:30Z) is kept and fold 1 (06:30Z) is past UNTIL. " + nyStd + ".");

        // --- end (local, inclusive) and cutoverAt mid-window
        Case e = c("new-york-daily-0230-end-inclusive-local", ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "2027-03-10T00:00:00",
                "SHIFT_FORWARD", "FIRST_ONLY", "2027-03-10T00:00:00Z", "2027-03-25T00:00:00Z", daily("02:30"),
                "end 2027-03-16T02:30:00 bounds the nominal local time, inclusive. " + nyDst + ".");
        e.end = LocalDateTime.parse("2027-03-16T02:30:00");
        Case cu = c("utc-hourly-cutover-mid-window", "UTC", "FREQ=HOURLY", "2026-06-01T00:00:00",
                "SKIP", "FIRST_ONLY", "2026-06-01T00:00:00Z", "2026-06-01T06:00:00Z", everyMinutes(60),
                "cutoverAt 2026-06-01T03:00:00Z: records placed before it belong to an earlier revision and are excluded.");
        cu.cutover = "2026-06-01T03:00:00Z"; cu.revision = 2;
        Case cg = c("new-york-daily-0230-cutover-at-gap-transition-skip", ny, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "2027-03-01T00:00:00",
                "SKIP", "FIRST_ONLY", "2027-03-12T00:00:00Z", "2027-03-17T00:00:00Z", daily("02:30"),
                "cutoverAt 2027-03-14T07:00:00Z equals the gap's transition instant: the SKIPPED_GAP record (placed at gapAt) is owned (half-open [cutoverAt, ...)), the 13th is not. " + nyDst + ".");
        cg.cutover = "2027-03-14T07:00:00Z"; cg.revision = 2;

        // --- RFC 5545 section 3.8.5.3 examples (America/New_York), result lists transcribed
        rfc("daily-count-10", "Daily for 10 occurrences", "1997-09-02T09:00:00", "FREQ=DAILY;COUNT=10",
                "1997 Sep 2-11 EDT", "1997-09-01T00:00:00Z", "1997-10-01T00:00:00Z", null);
        rfc("daily-until-1997-12-24-dst-end", "Daily until December 24, 1997", "1997-09-02T09:00:00", "FREQ=DAILY;UNTIL=19971224T000000Z",
                "1997 Oct 20-25 EDT; 1997 Oct 26-31 EST; 1997 Nov 1-5 EST", "1997-10-20T00:00:00Z", "1997-11-06T00:00:00Z",
                "Window restricted to 1997-10-20..11-05 around the 1997-10-26 DST end.");
        rfc("daily-until-1997-12-24-last", "Daily until December 24, 1997", "1997-09-02T09:00:00", "FREQ=DAILY;UNTIL=19971224T000000Z",
                "1997 Dec 1-23 EST", "1997-12-01T00:00:00Z", "1998-01-10T00:00:00Z",
                "Window covers the end: Dec 23 09:00 EST (14:00Z) is the last; Dec 24 09:00 EST would be past UNTIL.");
        rfc("every-other-day", "Every other day - forever", "1997-09-02T09:00:00", "FREQ=DAILY;INTERVAL=2",
                "1997 Sep 2-30/2 EDT; 1997 Oct 2-24/2 EDT; 1997 Oct 26-30/2 EST; 1997 Nov 1-29/2 EST; 1997 Dec 1-3/2 EST",
                "1997-09-01T00:00:00Z", "1997-12-04T00:00:00Z", "The RFC's '...' runs are written out (step 2 days).");
        rfc("every-10-days-count-5", "Every 10 days, 5 occurrences", "1997-09-02T09:00:00", "FREQ=DAILY;INTERVAL=10;COUNT=5",
                "1997 Sep 2,12,22 EDT; 1997 Oct 2,12 EDT", "1997-09-01T00:00:00Z", "1998-01-01T00:00:00Z", null);
        rfc("every-day-in-january-3-years-daily", "Every day in January, for 3 years", "1998-01-01T09:00:00", "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1",
                "2000 Jan 1-31 EST", "1999-12-01T00:00:00Z", "2000-03-01T00:00:00Z",
                "Window restricted to January 2000; UNTIL 20000131T140000Z = 2000-01-31 09:00 EST, inclusive.");
        rfc("every-day-in-january-3-years-yearly", "Every day in January, for 3 years", "1998-01-01T09:00:00",
                "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA",
                "1998 Jan 1-31 EST", "1998-01-01T00:00:00Z", "1998-03-01T00:00:00Z",
                "The YEARLY form of the same example; window restricted to January 1998.");
        rfc("weekly-count-10", "Weekly for 10 occurrences", "1997-09-02T09:00:00", "FREQ=WEEKLY;COUNT=10",
                "1997 Sep 2,9,16,23,30 EDT; 1997 Oct 7,14,21 EDT; 1997 Oct 28 EST; 1997 Nov 4 EST",
                "1997-09-01T00:00:00Z", "1998-01-01T00:00:00Z", null);
        rfc("weekly-until-1997-12-24", "Weekly until December 24, 1997", "1997-09-02T09:00:00", "FREQ=WEEKLY;UNTIL=19971224T000000Z",
                "1997 Sep 2,9,16,23,30 EDT; 1997 Oct 7,14,21 EDT; 1997 Oct 28 EST; 1997 Nov 4,11,18,25 EST; 1997 Dec 2,9,16,23 EST",
                "1997-09-01T00:00:00Z", "1998-01-01T00:00:00Z", null);
        rfc("every-other-week-wkst-su", "Every other week - forever", "1997-09-02T09:00:00", "FREQ=WEEKLY;INTERVAL=2;WKST=SU",
                "1997 Sep 2,16,30 EDT; 1997 Oct 14 EDT; 1997 Oct 28 EST; 1997 Nov 11,25 EST; 1997 Dec 9,23 EST; 1998 Jan 6,20 EST; 1998 Feb 3,17 EST",
                "1997-09-01T00:00:00Z", "1998-02-18T00:00:00Z", null);
        rfc("weekly-tu-th-five-weeks-until", "Weekly on Tuesday and Thursday for five weeks", "1997-09-02T09:00:00",
                "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH",
                "1997 Sep 2,4,9,11,16,18,23,25,30 EDT; 1997 Oct 2 EDT", "1997-09-01T00:00:00Z", "1998-01-01T00:00:00Z", null);
        rfc("weekly-tu-th-five-weeks-count", "Weekly on Tuesday and Thursday for five weeks", "1997-09-02T09:00:00",
                "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH",
                "1997 Sep 2,4,9,11,16,18,23,25,30 EDT; 1997 Oct 2 EDT", "1997-09-01T00:00:00Z", "1998-01-01T00:00:00Z",
                "The COUNT=10 form of the same example.");
        rfc("every-other-week-mo-we-fr-until", "Every other week on Monday, Wednesday, and Friday until December 24, 1997, starting on Monday, September 1, 1997",
                "1997-09-01T09:00:00", "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR",
                "1997 Sep 1,3,5,15,17,19,29 EDT; 1997 Oct 1,3,13,15,17 EDT; 1997 Oct 27,29,31 EST; 1997 Nov 10,12,14,24,26,28 EST; 1997 Dec 8,10,12,22 EST",
                "1997-08-01T00:00:00Z", "1998-01-01T00:00:00Z", null);
        rfc("every-other-week-tu-th-count-8", "Every other week on Tuesday and Thursday, for 8 occurrences", "1997-09-02T09:00:00",
                "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
                "1997 Sep 2,4,16,18,30 EDT; 1997 Oct 2,14,16 EDT", "1997-09-01T00:00:00Z", "1998-01-01T00:00:00Z", null);
        rfc("monthly-first-friday-count-10", "Monthly on the first Friday for 10 occurrences", "1997-09-05T09:00:00", "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
                "1997 Sep 5 EDT; 1997 Oct 3 EDT; 1997 Nov 7 EST; 1997 Dec 5 EST; 1998 Jan 2 EST; 1998 Feb 6 EST; 1998 Mar 6 EST; 1998 Apr 3 EST; 1998 May 1 EDT; 1998 Jun 5 EDT",
                "1997-09-01T00:00:00Z", "1999-01-01T00:00:00Z", null);
        rfc("monthly-first-friday-until", "Monthly on the first Friday until December 24, 1997", "1997-09-05T09:00:00", "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR",
                "1997 Sep 5 EDT; 1997 Oct 3 EDT; 1997 Nov 7 EST; 1997 Dec 5 EST", "1997-09-01T00:00:00Z", "1998-03-01T00:00:00Z", null);
        rfc("every-other-month-first-last-sunday-count-10", "Every other month on the first and last Sunday of the month for 10 occurrences",
                "1997-09-07T09:00:00", "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
                "1997 Sep 7,28 EDT; 1997 Nov 2,30 EST; 1998 Jan 4,25 EST; 1998 Mar 1,29 EST; 1998 May 3,31 EDT",
                "1997-09-01T00:00:00Z", "1999-01-01T00:00:00Z", null);
        rfc("monthly-second-to-last-monday-count-6", "Monthly on the second-to-last Monday of the month for 6 months", "1997-09-22T09:00:00", "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
                "1997 Sep 22 EDT; 1997 Oct 20 EDT; 1997 Nov 17 EST; 1997 Dec 22 EST; 1998 Jan 19 EST; 1998 Feb 16 EST",
                "1997-09-01T00:00:00Z", "1998-06-01T00:00:00Z", null);
        rfc("monthly-third-to-last-day", "Monthly on the third-to-the-last day of the month, forever", "1997-09-28T09:00:00", "FREQ=MONTHLY;BYMONTHDAY=-3",
                "1997 Sep 28 EDT; 1997 Oct 29 EST; 1997 Nov 28 EST; 1997 Dec 29 EST; 1998 Jan 29 EST; 1998 Feb 26 EST",
                "1997-09-01T00:00:00Z", "1998-03-01T00:00:00Z", null);
        rfc("monthly-2nd-and-15th-count-10", "Monthly on the 2nd and 15th of the month for 10 occurrences", "1997-09-02T09:00:00", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
                "1997 Sep 2,15 EDT; 1997 Oct 2,15 EDT; 1997 Nov 2,15 EST; 1997 Dec 2,15 EST; 1998 Jan 2,15 EST",
                "1997-09-01T00:00:00Z", "1998-06-01T00:00:00Z", null);
        rfc("monthly-first-and-last-day-count-10", "Monthly on the first and last day of the month for 10 occurrences", "1997-09-30T09:00:00", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
                "1997 Sep 30 EDT; 1997 Oct 1 EDT; 1997 Oct 31 EST; 1997 Nov 1,30 EST; 1997 Dec 1,31 EST; 1998 Jan 1,31 EST; 1998 Feb 1 EST",
                "1997-09-01T00:00:00Z", "1998-06-01T00:00:00Z", null);
        rfc("every-18-months-10th-to-15th-count-10", "Every 18 months on the 10th thru 15th of the month for 10 occurrences", "1997-09-10T09:00:00",
                "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
                "1997 Sep 10-15 EDT; 1999 Mar 10-13 EST", "1997-09-01T00:00:00Z", "2001-01-01T00:00:00Z", null);
        rfc("every-tuesday-every-other-month", "Every Tuesday, every other month", "1997-09-02T09:00:00", "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU",
                "1997 Sep 2,9,16,23,30 EDT; 1997 Nov 4,11,18,25 EST; 1998 Jan 6,13,20,27 EST; 1998 Mar 3,10,17,24,31 EST",
                "1997-09-01T00:00:00Z", "1998-04-01T00:00:00Z", null);
        rfc("yearly-june-july-count-10", "Yearly in June and July for 10 occurrences", "1997-06-10T09:00:00", "FREQ=YEARLY;COUNT=10;BYMONTH=6,7",
                "1997 Jun 10 EDT; 1997 Jul 10 EDT; 1998 Jun 10 EDT; 1998 Jul 10 EDT; 1999 Jun 10 EDT; 1999 Jul 10 EDT; 2000 Jun 10 EDT; 2000 Jul 10 EDT; 2001 Jun 10 EDT; 2001 Jul 10 EDT",
                "1997-01-01T00:00:00Z", "2003-01-01T00:00:00Z", null);
        rfc("every-other-year-jan-feb-mar-count-10", "Every other year on January, February, and March for 10 occurrences", "1997-03-10T09:00:00",
                "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
                "1997 Mar 10 EST; 1999 Jan 10 EST; 1999 Feb 10 EST; 1999 Mar 10 EST; 2001 Jan 10 EST; 2001 Feb 10 EST; 2001 Mar 10 EST; 2003 Jan 10 EST; 2003 Feb 10 EST; 2003 Mar 10 EST",
                "1997-01-01T00:00:00Z", "2006-01-01T00:00:00Z", null);
        rfc("every-third-year-yeardays-count-10", "Every third year on the 1st, 100th, and 200th day for 10 occurrences", "1997-01-01T09:00:00",
                "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
                "1997 Jan 1 EST; 1997 Apr 10 EDT; 1997 Jul 19 EDT; 2000 Jan 1 EST; 2000 Apr 9 EDT; 2000 Jul 18 EDT; 2003 Jan 1 EST; 2003 Apr 10 EDT; 2003 Jul 19 EDT; 2006 Jan 1 EST",
                "1997-01-01T00:00:00Z", "2010-01-01T00:00:00Z", null);
        rfc("every-20th-monday", "Every 20th Monday of the year, forever", "1997-05-19T09:00:00", "FREQ=YEARLY;BYDAY=20MO",
                "1997 May 19 EDT; 1998 May 18 EDT; 1999 May 17 EDT", "1997-01-01T00:00:00Z", "2000-01-01T00:00:00Z", null);
        rfc("monday-of-week-20", "Monday of week number 20 (where the default start of the week is Monday), forever", "1997-05-12T09:00:00", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
                "1997 May 12 EDT; 1998 May 11 EDT; 1999 May 17 EDT", "1997-01-01T00:00:00Z", "2000-01-01T00:00:00Z", null);
        rfc("every-thursday-in-march", "Every Thursday in March, forever", "1997-03-13T09:00:00", "FREQ=YEARLY;BYMONTH=3;BYDAY=TH",
                "1997 Mar 13,20,27 EST; 1998 Mar 5,12,19,26 EST; 1999 Mar 4,11,18,25 EST", "1997-01-01T00:00:00Z", "2000-01-01T00:00:00Z", null);
        rfc("every-thursday-june-july-august", "Every Thursday, but only during June, July, and August, forever", "1997-06-05T09:00:00", "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8",
                "1997 Jun 5,12,19,26 EDT; 1997 Jul 3,10,17,24,31 EDT; 1997 Aug 7,14,21,28 EDT; 1998 Jun 4,11,18,25 EDT; 1998 Jul 2,9,16,23,30 EDT; 1998 Aug 6,13,20,27 EDT; 1999 Jun 3,10,17,24 EDT; 1999 Jul 1,8,15,22,29 EDT; 1999 Aug 5,12,19,26 EDT",
                "1997-01-01T00:00:00Z", "2000-01-01T00:00:00Z", null);
        rfc("every-friday-13th", "Every Friday the 13th, forever", "1997-09-02T09:00:00", "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
                "1998 Feb 13 EST; 1998 Mar 13 EST; 1998 Nov 13 EST; 1999 Aug 13 EDT; 2000 Oct 13 EDT", "1997-09-01T00:00:00Z", "2001-01-01T00:00:00Z",
                "The RFC excludes DTSTART (a Tuesday) with EXDATE; in Almanac a start that does not match the rule is not an occurrence, so no EXDATE is needed.");
        rfc("first-saturday-after-first-sunday", "The first Saturday that follows the first Sunday of the month, forever", "1997-09-13T09:00:00",
                "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
                "1997 Sep 13 EDT; 1997 Oct 11 EDT; 1997 Nov 8 EST; 1997 Dec 13 EST; 1998 Jan 10 EST; 1998 Feb 7 EST; 1998 Mar 7 EST; 1998 Apr 11 EDT; 1998 May 9 EDT; 1998 Jun 13 EDT",
                "1997-09-01T00:00:00Z", "1998-07-01T00:00:00Z", null);
        rfc("us-presidential-election-day", "Every 4 years, the first Tuesday after a Monday in November, forever (U.S. Presidential Election day)", "1996-11-05T09:00:00",
                "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
                "1996 Nov 5 EST; 2000 Nov 7 EST; 2004 Nov 2 EST", "1996-01-01T00:00:00Z", "2005-01-01T00:00:00Z", null);
        rfc("bysetpos-third-tu-we-th-count-3", "The third instance into the month of one of Tuesday, Wednesday, or Thursday, for the next 3 months", "1997-09-04T09:00:00",
                "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
                "1997 Sep 4 EDT; 1997 Oct 7 EDT; 1997 Nov 6 EST", "1997-09-01T00:00:00Z", "1998-06-01T00:00:00Z", null);
        rfc("bysetpos-second-to-last-weekday", "The second-to-last weekday of the month", "1997-09-29T09:00:00", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
                "1997 Sep 29 EDT; 1997 Oct 30 EST; 1997 Nov 27 EST; 1997 Dec 30 EST; 1998 Jan 29 EST; 1998 Feb 26 EST; 1998 Mar 30 EST",
                "1997-09-01T00:00:00Z", "1998-04-01T00:00:00Z", null);
        rfc("every-15-minutes-count-6", "Every 15 minutes for 6 occurrences", "1997-09-02T09:00:00", "FREQ=MINUTELY;INTERVAL=15;COUNT=6",
                "1997 Sep 2 EDT @09:00,09:15,09:30,09:45,10:00,10:15", "1997-09-02T00:00:00Z", "1997-09-03T00:00:00Z", null);
        rfc("every-90-minutes-count-4", "Every hour and a half for 4 occurrences", "1997-09-02T09:00:00", "FREQ=MINUTELY;INTERVAL=90;COUNT=4",
                "1997 Sep 2 EDT @09:00,10:30,12:00,13:30", "1997-09-02T00:00:00Z", "1997-09-03T00:00:00Z", null);
        rfc("every-20-minutes-9-to-1640-daily", "Every 20 minutes from 9:00 AM to 4:40 PM every day", "1997-09-02T09:00:00",
                "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40",
                "1997 Sep 2 EDT @09:00-16:40/20; 1997 Sep 3 EDT @09:00-16:40/20", "1997-09-02T00:00:00Z", "1997-09-04T00:00:00Z",
                "The RFC's '...' between 10:20 and 16:00 is written out (every 20 minutes). Window: Sep 2-3.");
        rfc("every-20-minutes-9-to-1640-minutely", "Every 20 minutes from 9:00 AM to 4:40 PM every day", "1997-09-02T09:00:00",
                "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16",
                "1997 Sep 2 EDT @09:00-16:40/20; 1997 Sep 3 EDT @09:00-16:40/20", "1997-09-02T00:00:00Z", "1997-09-04T00:00:00Z",
                "The MINUTELY form of the same example.");
        rfc("wkst-mo", "An example where the days generated makes a difference because of WKST (WKST=MO)", "1997-08-05T09:00:00",
                "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
                "1997 Aug 5,10,19,24 EDT", "1997-08-01T00:00:00Z", "1997-10-01T00:00:00Z", null);
        rfc("wkst-su", "An example where the days generated makes a difference because of WKST (WKST=SU)", "1997-08-05T09:00:00",
                "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
                "1997 Aug 5,17,19,31 EDT", "1997-08-01T00:00:00Z", "1997-10-01T00:00:00Z", null);
        rfc("invalid-february-30-ignored", "An example where an invalid date (i.e., February 30) is ignored", "2007-01-15T09:00:00",
                "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
                "2007 Jan 15,30 EST; 2007 Feb 15 EST; 2007 Mar 15,30 EDT", "2007-01-01T00:00:00Z", "2007-06-01T00:00:00Z", null);
    }


    // ------------------------------------------------------------------ RFC 7529 RSCALE / SKIP

    static void defineRscaleCases() {
        String ny = "America/New_York";
        String rs = "RFC 7529 RSCALE=GREGORIAN with SKIP (invalid dates moved or dropped): ";

        // RFC 7529's leap-day example: an anniversary on 2012-02-29, FREQ=YEARLY;SKIP=FORWARD.
        // The loop must reproduce the dates the RFC prints for it.
        List<LocalDateTime> rfcList = leapDayYearlySkip("FORWARD").gen(
                LocalDateTime.parse("2012-02-29T09:00:00"), LocalDateTime.parse("2016-12-31T00:00:00"));
        List<String> printed = List.of("2012-02-29", "2013-03-01", "2014-03-01", "2015-03-01", "2016-02-29");
        List<String> got = new ArrayList<>();
        for (LocalDateTime t : rfcList) got.add(t.toLocalDate().toString());
        if (!got.equals(printed)) throw new IllegalStateException("RFC 7529 leap-day example: " + got);
        c("rfc7529-leap-day-anniversary-skip-forward-new-york", ny, "RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=FORWARD;COUNT=6",
                "2012-02-29T09:00:00", "SKIP", "FIRST_ONLY", "2012-01-01T00:00:00Z", "2020-01-01T00:00:00Z",
                leapDayYearlySkip("FORWARD"), rs + "RFC 7529's own leap-day example (DTSTART 2012-02-29, "
                        + "RRULE:RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=FORWARD; the RFC prints 2012-02-29, 2013-03-01, 2014-03-01, "
                        + "2015-03-01, 2016-02-29, which the loop reproduces) at 09:00 New York, COUNT=6: Mar 1 in common years.")
                .cutover = "2010-01-01T00:00:00Z";

        // Asia/Almaty moved from +06:00 to +05:00 at 2024-03-01T00:00 local (transition
        // 2024-02-29T18:00:00Z), so 2024-02-29 23:00-23:59 occurs twice: the leap day itself is a fold.
        String alm = "Asia/Almaty 2024-03-01 00:00 (+06:00) -> 2024-02-29 23:00 (+05:00), transition 2024-02-29T18:00:00Z; "
                + "2024-02-29 23:00-23:59 occurs twice; +06:00 before, +05:00 after";
        String[][] leap = {{"OMIT", "BOTH", "only leap years: 2020, 2024 (both readings of the fold), 2028"},
                {"BACKWARD", "FIRST_ONLY", "Feb 28 in common years (YearMonth.atEndOfMonth), Feb 29 in leap years"},
                {"FORWARD", "SECOND_ONLY", "Mar 1 in common years (first day of the next month), Feb 29 in leap years"}};
        for (String[] l : leap) {
            Case k = c("rfc7529-leap-day-yearly-skip-" + slug(l[0]) + "-almaty-fold", "Asia/Almaty",
                    "RSCALE=GREGORIAN;FREQ=YEARLY;SKIP=" + l[0], "2020-02-29T23:30:00", "SKIP", l[1],
                    "2020-01-01T00:00:00Z", "2030-01-01T00:00:00Z", leapDayYearlySkip(l[0]),
                    rs + "a yearly anniversary from 2020-02-29 23:30 under SKIP=" + l[0] + ": " + l[2]
                            + "; foldPolicy " + l[1] + ". " + alm + ".");
            k.cutover = "2019-01-01T00:00:00Z";
        }

        // BYMONTHDAY=31 through 2027 in Africa/Cairo: EEST starts on the last Friday of April,
        // 2027-04-30 00:00 -> 01:00, so BACKWARD's Apr 30 00:30 is in the gap.
        String cai = "Africa/Cairo 2027-04-30 00:00 EET(+02:00) -> 01:00 EEST(+03:00), transition 2027-04-29T22:00:00Z; "
                + "2027-04-30 00:00-00:59 does not exist";
        for (String g : GAPS)
            c("rfc7529-monthly-31-skip-backward-cairo-2027-gap-" + slug(g), "Africa/Cairo",
                    "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=BACKWARD", "2027-01-31T00:30:00", g, "FIRST_ONLY",
                    "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", monthlySkip("BACKWARD", "00:30", 31),
                    rs + "monthly on the 31st at 00:30, BACKWARD: the last day of short months (YearMonth.atEndOfMonth: "
                            + "Feb 28, Apr 30, Jun 30, Sep 30, Nov 30). " + cai + ".");

        // BYMONTHDAY=31 through 2023 in Australia/Sydney: AEDT starts 2023-10-01 02:00 -> 03:00, so
        // FORWARD's Oct 1 02:30 (from Sep 31) is in the gap.
        String syd = "Australia/Sydney 2023-10-01 02:00 AEST(+10:00) -> 03:00 AEDT(+11:00), transition 2023-09-30T16:00:00Z; "
                + "2023-10-01 02:00-02:59 does not exist";
        for (String g : GAPS)
            c("rfc7529-monthly-31-skip-forward-sydney-2023-gap-" + slug(g), "Australia/Sydney",
                    "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=FORWARD", "2023-01-31T02:30:00", g, "FIRST_ONLY",
                    "2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z", monthlySkip("FORWARD", "02:30", 31),
                    rs + "monthly on the 31st at 02:30, FORWARD: the first day of the month after a short one "
                            + "(Mar 1, May 1, Jul 1, Oct 1, Dec 1). " + syd + ".");

        // BYMONTHDAY=31 with OMIT in Europe/London: 2024-03-31 01:30 is in the gap, 2021-10-31 01:30 in the fold.
        c("rfc7529-monthly-31-skip-omit-london-2024-gap-shift-forward", "Europe/London",
                "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=OMIT", "2024-01-31T01:30:00", "SHIFT_FORWARD", "FIRST_ONLY",
                "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z", monthlySkip("OMIT", "01:30", 31),
                rs + "monthly on the 31st at 01:30, OMIT: only the seven months with a 31st. Europe/London 2024-03-31 "
                        + "01:00 GMT(+00:00) -> 02:00 BST(+01:00), transition 2024-03-31T01:00:00Z.");
        c("rfc7529-monthly-31-skip-omit-london-2021-fold-both", "Europe/London",
                "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=31;SKIP=OMIT", "2021-01-31T01:30:00", "SKIP", "BOTH",
                "2021-01-01T00:00:00Z", "2022-01-01T00:00:00Z", monthlySkip("OMIT", "01:30", 31),
                rs + "monthly on the 31st at 01:30, OMIT: only the seven months with a 31st. Europe/London 2021-10-31 "
                        + "02:00 BST(+01:00) -> 01:00 GMT(+00:00), transition 2021-10-31T01:00:00Z; 01:00-01:59 occurs twice.");

        // Several month days moved onto one date are one instance; COUNT counts after the move.
        c("rfc7529-monthly-29-30-31-skip-forward-count8-new-york", ny,
                "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=29,30,31;SKIP=FORWARD;COUNT=8", "2027-01-29T10:00:00", "SKIP", "FIRST_ONLY",
                "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", monthlySkip("FORWARD", "10:00", 29, 30, 31),
                rs + "Feb 29, 30 and 31 of 2027 all move to Mar 1, one instance; COUNT=8 counts after the move: Jan 29, 30, 31, "
                        + "Mar 1, 29, 30, 31, Apr 29 (EST before 2027-03-14, EDT after).");
        c("rfc7529-monthly-30-31-skip-backward-new-york-2028", ny,
                "RSCALE=GREGORIAN;FREQ=MONTHLY;BYMONTHDAY=30,31;SKIP=BACKWARD", "2028-01-30T10:00:00", "SKIP", "FIRST_ONLY",
                "2028-01-01T00:00:00Z", "2028-07-01T00:00:00Z", monthlySkip("BACKWARD", "10:00", 30, 31),
                rs + "Feb 30 and 31 of 2028 both move back to Feb 29 (a leap year), Apr 31 and Jun 31 onto the 30th that "
                        + "is already an instance: each date once.");
    }

    // ------------------------------------------------------------------ resolution (java.time)

    static Integer ruleCount(String rule) {
        Matcher m = Pattern.compile("(?:^|;)COUNT=(\\d+)").matcher(rule);
        return m.find() ? Integer.valueOf(m.group(1)) : null;
    }

    static Instant ruleUntil(String rule) {
        Matcher m = Pattern.compile("(?:^|;)UNTIL=(\\d{8}T\\d{6}Z)").matcher(rule);
        if (!m.find()) return null;
        return LocalDateTime.parse(m.group(1), DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss'Z'"))
                .toInstant(ZoneOffset.UTC);
    }

    static List<Rec> resolve(Case k) {
        ZoneRules zr = ZoneId.of(k.zone).getRules();
        LocalDateTime start = k.start == null ? DEFAULT_START : k.start;
        LocalDateTime horizon = LocalDateTime.ofInstant(k.to, ZoneOffset.UTC).plusDays(3);
        List<LocalDateTime> nominal = new ArrayList<>();
        for (LocalDateTime t : k.gen.gen(start, horizon)) {
            if (t.isBefore(start)) continue;
            if (k.end != null && t.isAfter(k.end)) continue;
            if (!k.rfc && t.isAfter(horizon)) continue;
            nominal.add(t);
        }
        for (int i = 1; i < nominal.size(); i++)
            if (!nominal.get(i).isAfter(nominal.get(i - 1))) throw new IllegalStateException(k.name + ": nominal order");
        Integer count = ruleCount(k.rule);
        Instant until = ruleUntil(k.rule);
        if (k.rfc) {
            if (count != null && nominal.size() != count)
                throw new IllegalStateException(k.name + ": RFC list size " + nominal.size() + " != COUNT " + count);
        }

        List<Rec> recs = new ArrayList<>();
        int counted = 0;
        for (LocalDateTime t : nominal) {
            if (count != null && counted >= count) break;
            List<ZoneOffset> offs = zr.getValidOffsets(t);
            if (offs.size() == 1) {
                ZoneOffset o = offs.get(0);
                recs.add(new Rec(t, 0, t.toInstant(o), null, o, "PLANNED", "UNAMBIGUOUS"));
                counted++;
            } else if (offs.size() == 2) {
                ZoneOffsetTransition tr = zr.getTransition(t);
                if (!tr.isOverlap()) throw new IllegalStateException("expected overlap");
                Instant first = t.toInstant(tr.getOffsetBefore()), second = t.toInstant(tr.getOffsetAfter());
                if (!first.isBefore(second)) throw new IllegalStateException("fold order");
                check(zr.getOffset(first).equals(tr.getOffsetBefore()) && zr.getOffset(second).equals(tr.getOffsetAfter()), k, "fold offsets");
                if (!k.fold.equals("SECOND_ONLY"))
                    recs.add(new Rec(t, 0, first, null, tr.getOffsetBefore(), "PLANNED", "FOLD_FIRST"));
                if (!k.fold.equals("FIRST_ONLY"))
                    recs.add(new Rec(t, 1, second, null, tr.getOffsetAfter(), "PLANNED", "FOLD_SECOND"));
                counted++;
            } else {
                ZoneOffsetTransition tr = zr.getTransition(t);
                if (tr == null || !tr.isGap()) throw new IllegalStateException("expected gap");
                Instant gapAt = tr.getInstant();
                if (k.gap.equals("SKIP")) {
                    recs.add(new Rec(t, 0, null, gapAt, null, "SKIPPED_GAP", "GAP_SKIPPED"));
                } else {
                    Instant shifted = t.toInstant(tr.getOffsetBefore()); // RFC 5545 3.3.5
                    ZoneOffset o = zr.getOffset(shifted);
                    check(o.equals(tr.getOffsetAfter()), k, "offset after gap");
                    // cross-check with java.time's own gap rule (ZonedDateTime.of shifts by the gap length)
                    check(ZonedDateTime.of(t, ZoneId.of(k.zone)).toInstant().equals(shifted), k, "ZonedDateTime gap shift");
                    recs.add(new Rec(t, 0, shifted, gapAt, o, "PLANNED", "GAP_SHIFTED_FORWARD"));
                    counted++;
                }
            }
        }
        // collisions: a shifted instant equal to a natural (non-gap) occurrence's instant
        Set<Instant> natural = new HashSet<>();
        for (Rec r : recs) if (r.gapAt == null && r.instant != null) natural.add(r.instant);
        for (int i = 0; i < recs.size(); i++) {
            Rec r = recs.get(i);
            if (r.reason.equals("GAP_SHIFTED_FORWARD") && natural.contains(r.instant))
                recs.set(i, new Rec(r.nominal, 0, null, r.gapAt, null, "SKIPPED_GAP", "GAP_SHIFT_COLLISION"));
        }
        Instant cutover = Instant.parse(k.cutover);
        List<Rec> out = new ArrayList<>();
        for (Rec r : recs) {
            Instant p = r.placed();
            if (until != null && p.isAfter(until)) continue;
            if (p.isBefore(cutover)) continue;
            if (p.isBefore(k.from) || !p.isBefore(k.to)) continue;
            out.add(r);
        }
        out.sort(Comparator.comparing(Rec::placed).thenComparing(r -> LOCAL.format(r.nominal)).thenComparingInt(Rec::fold));
        if (k.rfc) { // every transcribed date must survive, and its EDT/EST label must match java.time
            String[] labels = k.rfcLabels.split(" ");
            if (out.size() != nominal.size()) throw new IllegalStateException(k.name + ": window/UNTIL drops RFC dates");
            for (int i = 0; i < out.size(); i++) {
                Rec r = out.get(i);
                check(r.nominal.equals(nominal.get(i)) && r.reason.equals("UNAMBIGUOUS"), k, "rfc order");
                check(fmtOffset(r.offset).equals(LABEL_OFFSET.get(labels[i])), k,
                        "RFC label " + labels[i] + " vs " + r.offset + " at " + r.nominal);
            }
        }
        // independent sanity: an instant read back in the zone gives the nominal wall time (unshifted)
        for (Rec r : out) {
            if (r.instant == null) continue;
            LocalDateTime back = LocalDateTime.ofInstant(r.instant, ZoneId.of(k.zone));
            if (r.reason.equals("GAP_SHIFTED_FORWARD"))
                check(back.equals(r.nominal.plusSeconds(r.offset.getTotalSeconds()
                        - zr.getTransition(r.nominal).getOffsetBefore().getTotalSeconds())), k, "shift length");
            else check(back.equals(r.nominal), k, "round trip");
        }
        return out;
    }

    static void check(boolean ok, Case k, String what) {
        if (!ok) throw new IllegalStateException(k.name + ": check failed: " + what);
    }

    // ------------------------------------------------------------------ JSON output

    static String fmtOffset(ZoneOffset o) {
        int s = o.getTotalSeconds();
        if (s % 60 != 0) throw new IllegalStateException("offset with seconds: " + o);
        String sign = s < 0 ? "-" : "+";
        s = Math.abs(s);
        return String.format("%s%02d:%02d", sign, s / 3600, (s / 60) % 60);
    }

    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    static String q(Instant i) { return i == null ? "null" : q(INSTANT.format(i)); }

    static String json(Case k, List<Rec> recs) {
        String source;
        if (k.rfc) source = k.note + " Instants and offsets via " + JT + ".";
        else source = k.note + " Nominal local times enumerated by a hand-written java.time loop in tests/golden/tools/GoldenCases.java (no RRULE library); resolved with "
                + JT + ": getValidOffsets()==0 -> gap (getTransition), ==2 -> overlap.";
        StringBuilder b = new StringBuilder();
        b.append("{\n");
        b.append("  \"name\": ").append(q(k.name)).append(",\n");
        b.append("  \"source\": ").append(q(source)).append(",\n");
        b.append("  \"spec\": {");
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("schema", "scheduleSpec.v1");
        spec.put("scheduleId", k.scheduleId);
        spec.put("revision", k.revision);
        spec.put("timeZone", k.zone);
        spec.put("tzdbVersion", "2026a");
        spec.put("rule", k.rule);
        if (k.start != null) spec.put("start", LOCAL.format(k.start));
        if (k.end != null) spec.put("end", LOCAL.format(k.end));
        spec.put("gapPolicy", k.gap);
        spec.put("foldPolicy", k.fold);
        spec.putAll(k.extraSpec);
        spec.put("cutoverAt", k.cutover);
        StringJoiner sj = new StringJoiner(", ");
        for (Map.Entry<String, Object> e : spec.entrySet())
            sj.add(q(e.getKey()) + ": " + (e.getValue() instanceof Integer ? e.getValue().toString() : q((String) e.getValue())));
        b.append(sj).append("},\n");
        b.append("  \"window\": {\"from\": ").append(q(k.from)).append(", \"to\": ").append(q(k.to)).append("},\n");
        b.append("  \"expected\": [");
        for (int i = 0; i < recs.size(); i++) {
            Rec r = recs.get(i);
            b.append(i == 0 ? "\n" : ",\n");
            b.append("    {\"nominalLocal\": ").append(q(LOCAL.format(r.nominal)))
                    .append(", \"fold\": ").append(r.fold)
                    .append(", \"instant\": ").append(q(r.instant))
                    .append(", \"gapAt\": ").append(q(r.gapAt))
                    .append(", \"utcOffset\": ").append(r.offset == null ? "null" : q(fmtOffset(r.offset)))
                    .append(", \"disposition\": ").append(q(r.disposition))
                    .append(", \"reason\": ").append(q(r.reason)).append("}");
        }
        b.append(recs.isEmpty() ? "]\n" : "\n  ]\n");
        b.append("}\n");
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        Path out = Paths.get(args.length > 0 ? args[0] : "tests/golden/cases");
        Files.createDirectories(out);
        defineCases();
        defineRscaleCases();
        Set<String> names = new HashSet<>();
        int records = 0;
        for (Case k : CASES) {
            if (!names.add(k.name)) throw new IllegalStateException("duplicate case " + k.name);
            List<Rec> recs = resolve(k);
            if (recs.isEmpty()) throw new IllegalStateException(k.name + ": empty");
            records += recs.size();
            Files.write(out.resolve(k.name + ".json"), json(k, recs).getBytes(StandardCharsets.UTF_8));
        }
        System.out.println("wrote " + CASES.size() + " cases, " + records + " records, to " + out
                + " using JDK " + JDK + ", tzdb " + TZDB);
    }
}
