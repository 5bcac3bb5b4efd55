function test_linear_forward()
%TEST_LINEAR_FORWARD  maxpool's linear indices for many planes (the compact taps turned into offsets in X by
% the threads, each over its own rows of planes) against PyTorch's (fixtures.mat): each fixture whose format
% ends in its batch dimension, repeated over 8 more batches along it, gives the fixture's Y and indx in every
% copy, indx shifted by the copy's offset in X. Covers padding ('same', 2-by-N, vector), 1-D, 3-D and global
% pooling. And 320000 outputs against plain Octave's max over the exposed 2x2 windows.
f = load(fullfile(fileparts(mfilename('fullpath')), 'fixtures.mat'));
names = fieldnames(f.cases);
tried = 0;
for k = 1:numel(names)
  c = f.cases.(names{k});
  if ~strcmp(c.op, 'maxpool') || c.format(end) ~= 'B' || any(c.format(1:end-1) == 'B'), continue; end
  x = cast(c.X, c.class);
  nd = numel(c.format);
  copies = 9;
  reps = ones(1, nd); reps(nd) = copies;
  [Y, I] = poolkit.maxpool(repmat(x, reps), c.poolsize, c.args{:});
  shift = reshape(repelem((0:copies - 1) * numel(x), size(x, nd)), [ones(1, nd - 1), copies * size(x, nd)]);
  check(isequal(Y, repmat(cast(c.Y, c.class), reps)), '%s: Y differs', names{k});
  check(isequal(I, repmat(c.indx, reps) + shift) && isa(I, 'double'), '%s: indx differs', names{k});
  tried = tried + 1;
end
check(tried >= 5, 'only %d fixtures tried', tried);

randn('seed', 7);
X = randn(4, 4, 2, 40000);
[Y, I] = poolkit.maxpool(X, [2 2], 'Stride', 2, 'DataFormat', 'SSCB');
planes = 2 * 40000;
A = reshape(permute(reshape(X, 2, 2, 2, 2, planes), [1 3 2 4 5]), 4, []);  % (r, s) of each window (i, j, plane)
[m, k] = max(A, [], 1);
[i, j, q] = ndgrid(1:2, 1:2, 1:planes);
h = mod(k(:) - 1, 2) + 1 + 2 * (i(:) - 1);
w = floor((k(:) - 1) / 2) + 1 + 2 * (j(:) - 1);
check(isequal(Y(:), m(:)), 'many blocks: Y differs');
check(isequal(I(:), h + 4 * (w - 1) + 16 * (q(:) - 1)), 'many blocks: indx differs');
end
