# Which policy wins, by task grain and form of imbalance? colour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided
# Written by run.py plot; data in map_grain_form.dat.  Rerun: gnuplot map_grain_form.gp
datafile = "map_grain_form.dat"

set terminal svg size 1240,828 dynamic noenhanced background "#ffffff"
set output "map_grain_form.svg"
reset
set datafile missing NaN
set tics scale 0
set style fill solid 1.0 border lc rgb "#ffffff"
unset key
set multiplot layout 3,2 title "Which policy wins, by task grain and form of imbalance?\ncolour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided" font ",11"
set title "1 worker: measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 0 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "2 workers: measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 1 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 1 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "4 workers: SIMULATED epyc16" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 2 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 2 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "16 workers: SIMULATED epyc16" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 3 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 3 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "64 workers: SIMULATED twosocket64" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 4 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 4 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "128 workers: SIMULATED numa128" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 5 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 5 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
unset multiplot
unset output

set terminal pngcairo size 1240,828 noenhanced background "#ffffff"
set output "map_grain_form.png"
reset
set datafile missing NaN
set tics scale 0
set style fill solid 1.0 border lc rgb "#ffffff"
unset key
set multiplot layout 3,2 title "Which policy wins, by task grain and form of imbalance?\ncolour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided" font ",11"
set title "1 worker: measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 0 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "2 workers: measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 1 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 1 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "4 workers: SIMULATED epyc16" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 2 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 2 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "16 workers: SIMULATED epyc16" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 3 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 3 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "64 workers: SIMULATED twosocket64" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 4 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 4 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "128 workers: SIMULATED numa128" font ",10"
set xrange [-0.5:4.5]
set yrange [-0.5:3.5]
set xtics ("0.1 us" 0, "1 us" 1, "10 us" 2, "100 us" 3, "1 ms" 4) font ",9"
set ytics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set xlabel "task grain"
set ylabel "form of imbalance"
plot datafile index 5 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 5 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
unset multiplot
unset output
