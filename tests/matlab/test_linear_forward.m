function test_linear_forward()
%TEST_LINEAR_FORWARD  maxpool's linear indices for many planes (the compact taps turned into offsets in X by
% the threads, each over its own rows of planes) against PyTorch's (fixtures.mat): each fixture whose format
% ends in its batch dimension, repeated over 8 more batches along it, gives the fixture's Y and indx in every
% copy, indx shifted by the copy's offset in X. Covers padding ('same', 2-by-N, vector), 1-D, 3-D and global
% pooling. And many planes against plain Octave's max over the exposed 2x2 windows.
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

% Rows of 256 (4x4 planes, two channels) and rows of 45 outputs (6x10 planes, three channels), whose eight-output
% groups start at every alignment, in single and double.
randn('seed', 7);
many_blocks(randn(4, 4, 2, 40000));
many_blocks(single(randn(6, 10, 3, 500)));
end

function many_blocks(X)
% X's maxpool (2x2, stride 2, 'SSCB') against plain Octave's max over the exposed windows.
[H, W, C, B] = size(X);
[Y, I] = poolkit.maxpool(X, [2 2], 'Stride', 2, 'DataFormat', 'SSCB');
planes = C * B;
A = reshape(permute(reshape(X, 2, H / 2, 2, W / 2, planes), [1 3 2 4 5]), 4, []);  % (r, s) of each window
[m, k] = max(A, [], 1);
[i, j, q] = ndgrid(1:H / 2, 1:W / 2, 1:planes);
h = mod(k(:) - 1, 2) + 1 + 2 * (i(:) - 1);
w = floor((k(:) - 1) / 2) + 1 + 2 * (j(:) - 1);
check(isequal(Y(:), m(:)), '%dx%d planes: Y differs', H, W);
check(isequal(I(:), h + H * (w - 1) + H * W * (q(:) - 1)), '%dx%d planes: indx differs', H, W);
end
