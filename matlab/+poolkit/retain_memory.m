function retain_memory(tf)
%RETAIN_MEMORY  Keep freed memory in the process for the next arrays (GNU Octave on glibc; off by default).
%   poolkit.retain_memory(true)    freed blocks of up to 1 GiB stay with malloc, and up to 2 GiB of free heap is
%                                  kept: the arrays of a training loop's next step reuse the pages of its last.
%   poolkit.retain_memory(false)   glibc's initial thresholds again (128 KiB), and the free heap goes back to the
%                                  system now.
%   Every poolkit call returns new arrays. By default glibc maps each large one afresh, the kernel zeroes its
%   pages on first write and unmaps them when the array is freed: on seed 000's case (X single 32x32x2x16384)
%   about 1 ms of maxpool's 5 ms, and most of what the indices add (bench/RESULTS.md, session 18). Start Octave
%   with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for the kept pages to be 2 MiB huge pages. The setting is the
%   whole process's, Octave's own arrays included, so it is yours to make; poolkit never makes it on its own.
%   Its cost: memory freed by any array stays resident until poolkit.retain_memory(false). After `clear all` or
%   `clear functions` (which unload poolkit's MEX file) call it again. Where the C library is not glibc it raises
%   poolkit:notSupported. In MATLAB (NOT RUN HERE) it changes only what MATLAB allocates through glibc's malloc.
poolkit.pkmex('retain_memory', tf);
end
