# Which policy wins, by form of imbalance and worker count? colour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided
# Written by run.py plot; data in map_form_workers.dat.  Rerun: gnuplot map_form_workers.gp
datafile = "map_form_workers.dat"

set terminal svg size 1080,1506 dynamic noenhanced background "#ffffff"
set output "map_form_workers.svg"
reset
set datafile missing NaN
set tics scale 0
set style fill solid 1.0 border lc rgb "#ffffff"
unset key
set multiplot layout 6,2 title "Which policy wins, by form of imbalance and worker count?\ncolour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided" font ",11"
set title "grain 0.1 us: measured" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:1.5]
set xtics ("foreign" 0) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 0 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 1 us: measured" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:1.5]
set xtics ("foreign" 0) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 1 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 1 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 10 us: measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:1.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 2 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 2 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 100 us: measured" font ",10"
set xrange [-0.5:1.5]
set yrange [-0.5:1.5]
set xtics ("none" 0, "late" 1) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 3 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 3 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "their own grain (trees, arrival): measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:1.5]
set xtics ("fib" 0, "uts" 1, "arrival-p99" 2, "arrival-p50" 3) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 4 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 4 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 0.1 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:3.5]
set xtics ("foreign" 0) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 5 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 5 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 1 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 6 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 6 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 10 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 7 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 7 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 100 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 8 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 8 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 1 ms: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 9 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 9 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "their own grain (trees, arrival): SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:3.5]
set xtics ("fib" 0) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 10 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 10 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
unset multiplot
unset output

set terminal pngcairo size 1080,1506 noenhanced background "#ffffff"
set output "map_form_workers.png"
reset
set datafile missing NaN
set tics scale 0
set style fill solid 1.0 border lc rgb "#ffffff"
unset key
set multiplot layout 6,2 title "Which policy wins, by form of imbalance and worker count?\ncolour = winner, shade = margin over the runner-up (full at +50% or more); ~ fragile, ? undecided" font ",11"
set title "grain 0.1 us: measured" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:1.5]
set xtics ("foreign" 0) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 0 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 0 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 1 us: measured" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:1.5]
set xtics ("foreign" 0) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 1 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 1 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 10 us: measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:1.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 2 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 2 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 100 us: measured" font ",10"
set xrange [-0.5:1.5]
set yrange [-0.5:1.5]
set xtics ("none" 0, "late" 1) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 3 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 3 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "their own grain (trees, arrival): measured" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:1.5]
set xtics ("fib" 0, "uts" 1, "arrival-p99" 2, "arrival-p50" 3) font ",9"
set ytics ("1 worker" 0, "2 workers" 1) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 4 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 4 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 0.1 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:3.5]
set xtics ("foreign" 0) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 5 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 5 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 1 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 6 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 6 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 10 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 7 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 7 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 100 us: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 8 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 8 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "grain 1 ms: SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:3.5]
set yrange [-0.5:3.5]
set xtics ("none" 0, "late" 1, "skewed" 2, "foreign" 3) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 9 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 9 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
set title "their own grain (trees, arrival): SIMULATED epyc16, numa128, twosocket64" font ",10"
set xrange [-0.5:0.5]
set yrange [-0.5:3.5]
set xtics ("fib" 0) font ",9"
set ytics ("4 (epyc16)" 0, "16 (epyc16)" 1, "64 (twosocket64)" 2, "128 (numa128)" 3) font ",9"
set xlabel "form of imbalance"
set ylabel "workers"
plot datafile index 10 using 1:2:3:4:5 with boxxyerror lc rgb variable notitle, datafile index 10 using 1:2:6:7 with labels tc rgb variable font ",8" notitle
unset multiplot
unset output
