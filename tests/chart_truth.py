"""Hand-checked chart values from the dev PDFs: what a reader sees on the rendered page.

Every data label printed on these charts is here, written down by looking at the page rendered with
PyMuPDF (150-250 dpi), not from the reader's output. A row is a category; its values line up with
`series`; "" where the chart prints no number. A label whose category the chart does not print (a
point between two ticks of an uneven axis) has category None: no reader can pair it, so it must stay
unpaired. Totals printed at a stack's end are named by the segments they add up
("Poor + Not good"), or by the header the chart prints over them ("NET"). Categories that repeat
under two headings carry the heading ("2015 Hispanic").

`n` is the figure's number on its page (its figure id ends in `:image_caption:<page>:<n>`).
`raster`: the chart is a picture; "slide" charts are rendered from the page at `dpi` and put into a
PDF as an image, as a slide deck exported to PDF has them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ECONOMY = "PH_2016.06.08_Economy-Final.pdf"
POLITICS = "05-03-18-political-release.pdf"
SENIORS = "PIP_Seniors-and-Tech-Use_040314.pdf"


@dataclass
class Checked:
    pdf: str
    page: int
    n: int
    kind: str  # bar | stacked bar | line | pie
    series: list[str]
    rows: dict  # category (or None) → values, one per series
    raster: bool = False
    slide: tuple | None = None  # (clip, dpi): rendered from the page into an image-only PDF
    note: str = ""
    extra: list[tuple] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.pdf[:12]}-p{self.page}-{self.n}" + ("-slide" if self.slide else "")

    def triples(self) -> list[tuple]:
        out = []
        for category, values in self.rows.items():
            for series, value in zip(self.series, values):
                if value != "":
                    out.append((category, series, value))
        return out + self.extra


def rows(*items) -> dict:
    """("General population", "43", "41", "+2"), … → {category: values}."""
    return {category: list(values) for category, *values in items}


def unreadable(*items) -> list[tuple]:
    """(series, value) of labels whose category the chart does not print: they must stay unpaired."""
    return [(None, series, value) for series, value in items]


CHECKED = [
    # -- Pew Hispanic, economy (2016) --------------------------------------------------------------------
    Checked(ECONOMY, 4, 0, "line", ["General public", "Hispanic"], rows(
        ("2004", "51%", "31"), ("2008", "41", "23"), ("2011", "38", "24"), ("2015", "43", "40")),
        extra=unreadable(("General public", "43"), ("Hispanic", "33")),
        note="text drawn as outlines: read with OCR; the 2012 points have no tick (2004, 2008, 2011, 2015)"),
    Checked(ECONOMY, 4, 1, "line", ["Hispanic", "General public"], rows(
        ("2004", "76%", "70"), ("2008", "67", "56"), ("2011", "67", "58"), ("2015", "81", "61")),
        extra=unreadable(("Hispanic", "73"), ("General public", "67")),
        note="text drawn as outlines: read with OCR"),
    Checked(ECONOMY, 5, 0, "pie", [""], rows(
        ("Better off", "72%"), ("About the same", "16%"), ("Less well off", "5%"))),
    Checked(ECONOMY, 6, 0, "line", ["Hispanic", "Non-Hispanic"], rows(
        ("2000", "5.8%", "3.8%"), ("2015", "6.4", "4.8")), raster=True, note="an embedded picture"),
    Checked(ECONOMY, 7, 0, "line", ["All households", "Hispanic"], rows(
        ("Real median household income 2014", "$53,700", "$42,500"),
        ("Poverty rate 2014", "14.8%", "23.6%"),
        ("Median net worth of households 2007", "$135,700", "$23,600"),
        ("Median net worth of households 2013", "$81,400", "$13,700")),
        note="three panels, text drawn as outlines; the net-worth peak (2007) has no tick"),
    Checked(ECONOMY, 9, 0, "line", ["General public", "Hispanic"], rows(
        ("2004", "51", "31"), ("2008", "41", "23"), ("2011", "38", "24"), ("2015", "43", "40")),
        note="2011 lies between the 2010 and 2012 ticks of an evenly spaced axis"),
    Checked(ECONOMY, 10, 0, "bar", ["2015", "2008", "Change '08-'15"], rows(
        ("General population", "43", "41", "+2"), ("All Latinos", "40", "23", "+17"),
        ("U.S. born", "50", "33", "+17"), ("Foreign born", "31", "14", "+18"),
        ("2nd generation", "46", "", ""), ("3rd generation or higher", "53", "", ""),
        ("Male", "40", "24", "+16"), ("Female", "41", "22", "+18"),
        ("Less than high school", "23", "11", "+12"), ("High school graduate", "39", "23", "+16"),
        ("Some college or more", "56", "39", "+17"), ("Ages 18-29", "48", "21", "+27"),
        ("30-49", "36", "22", "+14"), ("50-64", "40", "26", "+14"), ("65 and older", "37", "28", "+9"))),
    Checked(ECONOMY, 11, 0, "stacked bar", ["Falling behind", "Staying about even with", "Going up faster than"], rows(
        ("2015 Hispanic", "53", "37", "10"), ("2015 White", "49", "43", "7"), ("2015 Black", "51", "41", "7"),
        ("2014 Hispanic", "53", "34", "9"), ("2014 White", "59", "33", "7"), ("2014 Black", "55", "36", "8"))),
    Checked(ECONOMY, 13, 0, "line", ["Hispanic", "General public"], rows(
        ("2004", "76", "70"), ("2008", "67", "56"), ("2011", "67", "58"), ("2015", "81", "61"))),
    Checked(ECONOMY, 14, 0, "bar", ["2015", "2008", "Change '08-'15"], rows(
        ("General population", "61", "56", "+6"), ("All Hispanics", "81", "67", "+14"),
        ("U.S. born", "81", "67", "+14"), ("Foreign born", "81", "67", "+14"),
        ("2nd generation", "86", "", ""), ("3rd generation or higher", "76", "", ""),
        ("Male", "84", "67", "+18"), ("Female", "77", "67", "+11"),
        ("Less than high school", "77", "66", "+11"), ("High school graduate", "80", "71", "+9"),
        ("Some college or more", "85", "65", "+20"), ("Ages 18-29", "90", "77", "+13"),
        ("30-49", "83", "67", "+16"), ("50-64", "73", "57", "+16"), ("65 and older", "59", "52", "+7"))),
    Checked(ECONOMY, 16, 0, "stacked bar", ["Improve a lot", "Improve some", "Get a little worse", "Get a lot worse"],
            rows(("Excellent financial condition", "45", "41", "5", ""),
                 ("Good financial condition", "30", "59", "3", "1"),
                 ("Only fair financial condition", "17", "62", "8", "3"),
                 ("Poor financial condition", "15", "51", "13", "8"))),
    Checked(ECONOMY, 17, 0, "stacked bar", ["Less well-off", "Better off", "About the same"], rows(
        ("All Hispanics", "5", "72", "16"), ("U.S. born", "6", "70", "17"), ("Foreign born", "5", "75", "16"),
        ("2nd generation", "5", "72", "16"), ("3rd generation or higher", "6", "68", "18"),
        ("Male", "6", "72", "15"), ("Female", "5", "73", "17"), ("Less than high school", "4", "71", "18"),
        ("High school graduate", "4", "79", "14"), ("Some college or more", "7", "69", "17"),
        ("Ages 18-29", "3", "75", "18"), ("30-49", "4", "76", "14"), ("50-64", "7", "70", "16"),
        ("65 and older", "13", "52", "23"))),
    # -- Pew Research Center, politics (2018) ------------------------------------------------------------
    Checked(POLITICS, 3, 0, "stacked bar",
            ["No or almost no", "A few", "Many, not all", "All or nearly all", "No or almost no + A few",
             "Many, not all + All or nearly all"],
            rows(("May 2018", "33", "24", "22", "19", "57", "41"), ("Aug 2017", "45", "21", "18", "15", "66", "33"))),
    Checked(POLITICS, 3, 1, "stacked bar", ["Like", "Have mixed feelings about", "Don't like"], rows(
        ("May 2018", "19", "26", "54"), ("Aug 2017", "16", "25", "58"))),
    Checked(POLITICS, 4, 0, "stacked bar", ["Poor", "Excellent", "Poor + Not good", "Good + Excellent"], rows(
        ("Total", "36", "9", "58", "39"), ("Rep/Lean Rep", "7", "19", "22", "75"),
        ("Dem/Lean Dem", "61", "2", "86", "12"))),
    Checked(POLITICS, 5, 0, "stacked bar", ["Not at all", "Very", "Not at all + Not too", "Somewhat + Very"], rows(
        ("Negotiate favorable trade agreements with other countries", "26", "30", "44", "54"),
        ("Make good decisions about economic policy", "29", "31", "46", "53"),
        ("Use military force wisely", "32", "26", "51", "46"),
        ("Make good appointments to the federal courts", "32", "25", "48", "46"),
        ("Manage the executive branch effectively", "34", "21", "52", "45"),
        ("Make wise decisions about immigration policy", "39", "26", "55", "43"),
        ("Handle an international crisis", "35", "25", "54", "43"),
        ("Work effectively with Congress", "33", "13", "54", "43"))),
    Checked(POLITICS, 6, 0, "line", ["Handle an international crisis", "Make good decisions about economic policy"],
            rows(("Apr 2017", "48", ""), ("May 2018", "43", "53"), ("Jan 2018", "", "46")),
            extra=unreadable(("Handle an international crisis", "39"), ("Handle an international crisis", "35")),
            note="small multiples: each panel's title names its line; points between the end ticks have no date"),
    Checked(POLITICS, 6, 1, "line", ["Make wise decisions about immigration policy", "Work effectively with Congress"],
            rows(("Aug 2017", "40", ""), ("May 2018", "43", "43"), ("Apr 2017", "", "46")),
            extra=unreadable(("Make wise decisions about immigration policy", "38"),
                             ("Work effectively with Congress", "39"), ("Work effectively with Congress", "44"))),
    Checked(POLITICS, 7, 0, "stacked bar",
            ["No or almost no", "A few", "Many, not all", "All or nearly all", "No or almost no + A few",
             "Many, not all + All or nearly all"],
            rows(("Among Rep/Lean Rep May 2018", "5", "14", "42", "38", "19", "80"),
                 ("Among Rep/Lean Rep Aug 2017", "8", "22", "38", "31", "30", "69"),
                 ("Among Dem/Lean Dem May 2018", "58", "29", "7", "5", "88", "12"),
                 ("Among Dem/Lean Dem Aug 2017", "77", "17", "3", "3", "93", "6"))),
    Checked(POLITICS, 7, 1, "stacked bar", ["Like", "Have mixed feelings about", "Don't like"], rows(
        ("Total", "19", "26", "54"), ("Rep/Lean Rep", "38", "45", "16"), ("Dem/Lean Dem", "5", "10", "85"))),
    Checked(POLITICS, 8, 0, "bar", [""], rows(
        ("May 2018", "39"), ("June 2013", "49"), ("June 2006", "44"), ("Oct 2005", "50"), ("July 2005", "55"),
        ("July 2002", "74"), ("Sep 1996*", "45"), ("Mar 1994", "58"), ("May 1989", "59"), ("Oct 1984*", "67"),
        ("Sep 1984*", "64"), ("Aug 1983", "64"))),
    Checked(POLITICS, 9, 0, "stacked bar", ["Poor", "Excellent", "Poor + Not good", "Good + Excellent"], rows(
        ("Total", "36", "9", "58", "39"), ("Rep/Lean Rep", "7", "19", "22", "75"), ("Conserv", "5", "22", "15", "82"),
        ("Mod/Lib", "12", "12", "36", "61"), ("Dem/Lean Dem", "61", "2", "86", "12"),
        ("Cons/Mod", "52", "3", "80", "19"), ("Liberal", "73", "", "93", "5"), ("All", "38", "7", "65", "31"),
        ("Lean Dem", "59", "3", "88", "10"), ("Lean Rep", "10", "15", "31", "67")),
        note="the legend's swatches are shades off the bars and one bar colour has no swatch"),
    Checked(POLITICS, 10, 0, "stacked bar",
            ["Disapprove Strongly", "Approve Strongly", "Disapprove Strongly + Disapprove Not strongly",
             "Approve Not strongly + Approve Strongly"],
            rows(("Total", "42", "27", "54", "39"), ("Men", "33", "34", "45", "48"), ("Women", "51", "20", "64", "30"),
                 ("White", "36", "37", "44", "49"), ("Black", "65", "7", "83", "13"),
                 ("Hispanic", "49", "9", "69", "23"), ("Ages 18-29", "46", "14", "65", "27"),
                 ("30-49", "41", "26", "54", "38"), ("50-64", "42", "34", "50", "45"), ("65+", "39", "34", "49", "47"),
                 ("Postgrad", "59", "16", "68", "23"), ("College grad", "51", "23", "62", "35"),
                 ("Some college", "40", "29", "53", "41"), ("HS or less", "36", "30", "49", "43"),
                 ("Rep/Lean Rep", "8", "60", "14", "81"), ("Conserv", "4", "72", "7", "89"),
                 ("Mod/Lib", "16", "37", "28", "64"), ("Dem/Lean Dem", "71", "3", "88", "8"),
                 ("Cons/Mod", "63", "5", "84", "12"), ("Liberal", "83", "1", "93", "4"),
                 ("White evang Prot", "13", "56", "20", "72"), ("White mainline Prot", "34", "40", "41", "55"),
                 ("Black Prot", "69", "8", "83", "13"), ("Catholic", "42", "27", "55", "40"),
                 ("Unaffiliated", "55", "13", "71", "22")),
            note="the legend repeats Strongly / Not strongly under Disapprove and Approve"),
    Checked(POLITICS, 11, 0, "bar", ["Republican Party", "Democratic Party"], rows(
        ("Has good policy ideas", "50", "50"), ("Has high ethical standards", "41", "42"),
        ("Is too extreme", "48", "42"))),
    Checked(POLITICS, 12, 0, "stacked bar",
            ["Describes both parties", "Describes one party, not the other", "Describes neither party"], rows(
                ("Total", "17", "47", "25"), ("College grad+", "17", "43", "31"), ("Some coll", "15", "49", "26"),
                ("HS or less", "17", "47", "20"), ("Republican", "14", "59", "19"), ("Democrat", "18", "55", "18"),
                ("Independent", "18", "34", "34"), ("Lean Rep", "18", "41", "33"), ("Lean Dem", "17", "37", "33"))),
    Checked(POLITICS, 13, 0, "stacked bar", ["Very closely", "NET"], rows(
        ("Total", "19", "50"), ("White", "18", "53"), ("Black", "30", "60"), ("Hispanic", "13", "35"),
        ("Ages 18-29", "6", "32"), ("30-49", "17", "47"), ("50-64", "25", "61"), ("65+", "24", "61"),
        ("Rep/Lean Rep", "18", "52"), ("Conserv", "22", "60"), ("Mod/Lib", "11", "36"),
        ("Dem/Lean Dem", "21", "52"), ("Cons/Mod", "18", "47"), ("Liberal", "24", "62"))),
    Checked(POLITICS, 14, 0, "stacked bar", ["Democratic", "Republican"], rows(
        ("All registered voters", "48", "43"), ("Men", "41", "50"), ("Women", "55", "37"), ("White", "39", "53"),
        ("Black", "85", "7"), ("Hispanic", "59", "33"), ("18-29", "58", "31"), ("30-49", "47", "43"),
        ("50-64", "47", "48"), ("65+", "45", "47"), ("Postgrad", "62", "30"), ("College grad", "53", "40"),
        ("Some coll", "49", "44"), ("HS or less", "42", "47"), ("Rep/Lean Rep", "5", "90"),
        ("Dem/Lean Dem", "92", "4"), ("College grad +", "49", "44"), ("No college degree", "34", "58"))),
    # -- Pew Internet, seniors (2014) --------------------------------------------------------------------
    Checked(SENIORS, 3, 0, "bar", ["Go online", "Broadband at home"], rows(
        ("65-69", "74", "65"), ("70-74", "68", "55"), ("75-79", "47", "34"), ("80+", "37", "21"))),
    Checked(SENIORS, 4, 0, "stacked bar", ["3-5 times per week", "Every day or almost every day", "Net"], rows(
        ("18-29", "6", "88", "94"), ("30-49", "8", "84", "92"), ("50-64", "8", "79", "87"), ("65+", "11", "71", "82")),
        note="each series' bars are one path; its series are named beside the last bar, not in a legend"),
    Checked(SENIORS, 5, 0, "bar", ["Smartphone", "Tablet or e-reader"], rows(
        ("All adults", "55", "43"), ("65+", "18", "27"))),
    Checked(SENIORS, 6, 0, "pie", [""], rows(
        ("Use SNS", "27%"), ("Go online, no SNS", "32%"), ("Do not go online", "41%"))),
    Checked(SENIORS, 7, 0, "line", ["All Adults 18+", "65+"], rows(("2000", "50", "14"), ("2013", "86", "59")),
            note="the lines end in 2013, past the last tick (2012), between ticks"),
    Checked(SENIORS, 11, 0, "line", ["18-29", "30-49", "50-64", "65+"], rows(("2013", "90", "78", "65", "46"))),
    Checked(SENIORS, 14, 0, "stacked bar", ["Strongly agree", "Somewhat agree", "Net"], rows(
        ("Internet users", "47", "31", "79"), ("Non-Users", "25", "24", "48"))),
    # -- the same charts as pictures: a slide deck exported to PDF -----------------------------------------
    Checked(ECONOMY, 11, 0, "stacked bar", ["Falling behind", "Staying about even with", "Going up faster than"], rows(
        ("2015 Hispanic", "53", "37", "10"), ("2015 White", "49", "43", "7"), ("2015 Black", "51", "41", "7"),
        ("2014 Hispanic", "53", "34", "9"), ("2014 White", "59", "33", "7"), ("2014 Black", "55", "36", "8")),
        raster=True, slide=((230, 380, 545, 600), 150)),
    Checked(SENIORS, 3, 0, "bar", ["Go online", "Broadband at home"], rows(
        ("65-69", "74", "65"), ("70-74", "68", "55"), ("75-79", "47", "34"), ("80+", "37", "21")),
        raster=True, slide=((230, 240, 545, 470), 150)),
]
